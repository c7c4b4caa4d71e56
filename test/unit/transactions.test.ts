import { expect } from 'chai';
import knex, { type Knex } from 'knex';
import { transaction } from '../../src/db/dialects/index.js';

describe('SQLite transactions in line (src/db/dialect.ts)', () => {
  let db: Knex;
  before(async () => {
    db = knex({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true, pool: { min: 1, max: 1 } });
    await db.schema.createTable('workspaces', (t) => t.string('id').primary());
    await db.schema.createTable('counts', (t) => t.integer('n'));
  });
  after(() => db.destroy());

  it('starts each transaction on a turn of the event loop of its own, never in the turn the one before it ended', async () => {
    const log: string[] = [];
    const work = (name: string) => async (trx: Knex.Transaction) => {
      log.push(`${name} starts`);
      await trx('counts').insert({ n: 1 });
      // Anything waiting for the loop (a request) gets its turn before the next transaction starts.
      setImmediate(() => log.push(`turn after ${name}`));
      log.push(`${name} ends`);
      return name;
    };
    const results = await Promise.all([transaction(db, work('a')), transaction(db, work('b')), transaction(db, work('c'))]);
    expect(results).to.deep.equal(['a', 'b', 'c']);
    expect(log).to.deep.equal(['a starts', 'a ends', 'turn after a', 'b starts', 'b ends', 'turn after b', 'c starts', 'c ends']);
    expect((await db('counts').count({ n: '*' }))[0]).to.deep.equal({ n: 3 });
  });

  it('lets the next one run when one fails, and rolls the failed one back', async () => {
    await db('counts').del();
    const failing = transaction(db, async (trx) => {
      await trx('counts').insert({ n: 2 });
      throw new Error('refused');
    });
    const next = transaction(db, async (trx) => trx('counts').insert({ n: 3 }));
    const failure = await failing.then(() => undefined, (err: Error) => err);
    expect(failure?.message).to.equal('refused');
    await next;
    expect(await db('counts').pluck('n')).to.deep.equal([3]);
  });
});
