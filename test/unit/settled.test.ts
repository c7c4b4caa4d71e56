import { expect } from 'chai';
import knex, { type Knex } from 'knex';
import { DONE } from '../../src/common/done.js';
import { insertRows } from '../../src/db/insert-rows.js';
import { ROWS_PER_INSERT } from '../../src/db/prepared.js';
import { groupCommit } from '../../src/db/tx.js';

/**
 * SQLite's writes answer with promises already settled (src/db/tx.ts, src/db/insert-rows.ts):
 * what they answer must still be what an async function would have, a failure a rejection and
 * never an exception thrown at the caller.
 */
describe('settled answers of SQLite writes (src/common/done.ts)', () => {
  let db: Knex;
  before(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
    await db.schema.createTable('items', (t) => {
      t.string('id').primary();
      t.integer('n');
    });
  });
  after(() => db.destroy());
  beforeEach(() => db('items').del());

  const items = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: `item_${from + i}`, n: from + i }));
  const columns = ['id', 'n'] as const;

  it('answers no rows with the shared settled promise, and runs no statement', async () => {
    const ran: string[] = [];
    const tx = { all: async () => [], run: async (sql: string) => void ran.push(sql) };
    expect(insertRows(db, tx, 'items', columns, [])).to.equal(DONE);
    await DONE;
    expect(ran).to.deep.equal([]);
  });

  it('writes one statement\'s rows and more than one statement\'s, in a group commit', async () => {
    await groupCommit(db, (tx) => insertRows(db, tx, 'items', columns, items(0, 3)));
    await groupCommit(db, (tx) => insertRows(db, tx, 'items', columns, items(3, ROWS_PER_INSERT + 5)));
    expect((await db('items').count({ n: '*' }))[0]).to.deep.equal({ n: ROWS_PER_INSERT + 8 });
  });

  it('rejects, never throws, when a statement fails, and leaves nothing of the failed write', async () => {
    await groupCommit(db, (tx) => insertRows(db, tx, 'items', columns, items(0, 1)));
    let thrown: unknown;
    let answer: Promise<void> | undefined;
    const write = groupCommit(db, (tx) => {
      try {
        // A duplicate key, and a row before it in the same statement.
        answer = insertRows(db, tx, 'items', columns, [...items(10, 1), ...items(0, 1)]);
      } catch (err) {
        thrown = err;
      }
      return answer ?? Promise.resolve();
    });
    const failure = await write.then(() => undefined, (err: Error) => err);
    expect(thrown).to.equal(undefined);
    expect(answer).to.be.instanceOf(Promise);
    expect(failure?.message).to.match(/UNIQUE constraint failed: items\.id/);
    expect(await db('items').orderBy('id').pluck('id')).to.deep.equal(['item_0']);
  });

  it('rejects when the statement cannot even be prepared (a table that does not exist)', async () => {
    const failure = await groupCommit(db, (tx) => insertRows(db, tx, 'missing', columns, items(0, 1))).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).to.match(/no such table: missing/);
  });
});
