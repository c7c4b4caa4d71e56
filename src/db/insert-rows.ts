import type { Knex } from 'knex';
import { named, preparedOnce, ROWS_PER_INSERT, rowsArgs } from './prepared.js';
import type { Tx } from './tx.js';
import { DONE } from '../common/done.js';

/**
 * Rows written to one table in the caller's transaction (a batch's objects, their search terms,
 * their events): INSERTs of up to a hundred rows each, the statement of each count compiled once
 * by knex (db/prepared.ts) and prepared once per connection by the driver.
 */
export function insertRows(db: Knex, tx: Tx, table: string, columns: readonly string[], rows: readonly object[]): Promise<void> {
  if (rows.length === 0) return DONE;
  // One statement (a write's rows, the hot path): its promise is the answer, with none of our own.
  if (rows.length <= ROWS_PER_INSERT) {
    try {
      return insertChunk(db, tx, table, columns, rows);
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return insertChunks(db, tx, table, columns, rows);
}

function insertChunk(db: Knex, tx: Tx, table: string, columns: readonly string[], chunk: readonly object[]): Promise<void> {
  const statement = preparedOnce(db, `insert:${table}:${columns.join(',')}:${chunk.length}`, () => db(table).insert(chunk.map(() => named(columns))));
  return tx.run(statement.sql, rowsArgs(statement, chunk));
}

async function insertChunks(db: Knex, tx: Tx, table: string, columns: readonly string[], rows: readonly object[]): Promise<void> {
  for (let at = 0; at < rows.length; at += ROWS_PER_INSERT) await insertChunk(db, tx, table, columns, rows.slice(at, at + ROWS_PER_INSERT));
}
