import { expect } from 'chai';
import type { Knex } from 'knex';
import { dialectFor } from '../../src/db/dialects/index.js';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * The dialect's groupwise first row (db/dialect.ts FirstSpec): the groups as JSON, joined LATERAL
 * on PostgreSQL and by a correlated subquery on SQLite; on MariaDB a UNION ALL of one probe a
 * group, its text kept by count.
 */
describe('the first row of each group (dialect firstOfGroups)', () => {
  let app: TestApp;
  let db: Knex;
  const table = 'test_first_of_groups';
  before(async () => {
    app = await startApp();
    db = app.deps.db;
    await db.schema.dropTableIfExists(table);
    await db.schema.createTable(table, (t) => {
      t.string('id', 64).primary();
      t.string('a', 64).notNullable();
      t.string('b', 64).notNullable();
      t.bigInteger('n');
      t.index(['a', 'b', 'n']);
    });
    await db(table).insert([
      { id: 'x1', a: 's1', b: 'o1', n: 30 },
      { id: 'x2', a: 's1', b: 'o1', n: 10 },
      { id: 'x3', a: 's1', b: 'o1', n: null },
      { id: 'x4', a: 's1', b: "o'2 \u00e9\"}", n: 5 },
      { id: 'x5', a: 's2', b: 'o1', n: 7 },
      { id: 'x6', a: 's1', b: 'o3', n: null },
    ]);
  });
  after(async () => {
    await db?.schema.dropTableIfExists(table);
    await app?.close();
  });

  const first = async (groups: string[][]) =>
    ((await dialectFor(db).firstOfGroups(db, { table, by: ['a', 'b'], groups, order: 'n', columns: ['id', 'n'] })) as Array<{ id: string; n: number | string }>).map((r) => `${r.id}:${Number(r.n)}`).sort();

  it('answers each group its least `order`, leaving out rows without one and groups with none', async () => {
    expect(await first([['s1', 'o1']])).to.deep.equal(['x2:10']);
    expect(await first([['s1', 'o1'], ['s2', 'o1'], ['s1', "o'2 \u00e9\"}"], ['s1', 'o3'], ['s9', 'o1']])).to.deep.equal(['x2:10', 'x4:5', 'x5:7']);
    expect(await first([])).to.deep.equal([]);
  });

  it('reads the rows of the transaction it is given, and as many groups as it is given', async () => {
    const trx = await db.transaction();
    try {
      await trx(table).insert({ id: 'x7', a: 's1', b: 'o1', n: 1 });
      expect((await dialectFor(trx).firstOfGroups(trx, { table, by: ['a', 'b'], groups: [['s1', 'o1']], order: 'n', columns: ['id'] })).map((r) => r.id)).to.deep.equal(['x7']);
    } finally {
      await trx.rollback();
    }
    expect(await first([['s1', 'o1']])).to.deep.equal(['x2:10']);
    const many = Array.from({ length: 100 }, (_, i) => ['s1', i % 2 === 0 ? 'o1' : `none${i}`]);
    expect(await first(many)).to.deep.equal(Array.from({ length: 50 }, () => 'x2:10'));
  });
});
