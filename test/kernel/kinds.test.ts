import { expect } from 'chai';
import fc from 'fast-check';
import type { Knex } from 'knex';
import { loadConfig } from '../../src/common/config.js';
import { createDb } from '../../src/db/connect.js';
import { addColumn } from '../../src/db/tables.js';
import { backend } from '../helpers/backend.js';
import { KIND_CASES } from '../helpers/kinds.js';

/**
 * Every field kind through a real column of this run's database: what a client sends, encoded,
 * stored in the column the kind declares, read back and decoded, is what the client must read.
 */
describe('field kinds through real columns of this run\'s database', () => {
  let db: Knex;
  const table = 'kind_round_trip';
  const column = (i: number) => `c${i}`;
  before(async () => {
    db = createDb(loadConfig(backend().env).database);
    await db.schema.dropTableIfExists(table);
    await db.schema.createTable(table, (t) => {
      t.increments('seq');
      t.integer('kase').notNullable();
      // Nullable here whatever the kind says: each case is written alone, the others left empty.
      KIND_CASES.forEach(({ kind }, i) => addColumn(t, column(i), { ...kind.column, nullable: true }));
    });
  });
  after(async () => {
    await db.schema.dropTableIfExists(table);
    await db.destroy();
  });

  KIND_CASES.forEach(({ name, kind, values }, i) => {
    it(`${name}: stored in its ${kind.column.type} column and read back as the client must read it`, async () => {
      const samples = fc.sample(values, { numRuns: 60, seed: 42 + i });
      await db(table).insert(samples.map(([sent]) => ({ kase: i, [column(i)]: kind.encode(sent) })));
      const read = await db(table).select(column(i)).where('kase', i).orderBy('seq');
      expect(read.map((row: Record<string, unknown>) => kind.decode(row[column(i)]))).to.deep.equal(samples.map(([, expected]) => expected));
    });
  });
});
