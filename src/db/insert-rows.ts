import type { Knex } from 'knex';
import { named, preparedOnce, ROWS_PER_INSERT, rowsArgs } from './prepared.js';
import type { Tx } from './tx.js';

/**
 * Rows written to one table in the caller's transaction (a batch's objects, their search terms,
 * their events): INSERTs of up to a hundred rows each, the statement of each count compiled once
 * by knex (db/prepared.ts) and prepared once per connection by the driver.
 */
export async function insertRows(db: Knex, tx: Tx, table: string, columns: readonly string[], rows: readonly object[]): Promise<void> {
  for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) {
    const chunk = rows.slice(at, at + ROWS_PER_INSERT);
    const statement = preparedOnce(db, `insert:${table}:${columns.join(',')}:${chunk.length}`, () => db(table).insert(chunk.map(() => named(columns))));
    await tx.run(statement.sql, rowsArgs(statement, chunk));
  }
}
