import { expect } from 'chai';
import { dialectOf, isDuplicateKey } from '../../src/db/dialect.js';
import { numbered } from '../../src/db/driver.js';
import { writeTransaction } from '../../src/db/tx.js';
import { backend } from '../helpers/backend.js';
import { startApp, type TestApp } from '../helpers/app.js';

/**
 * Writes started together (db/tx.ts): on SQLite they commit together, in one transaction; on
 * MySQL and PostgreSQL each has its own. Either way each answers as it would alone.
 */
describe('write transactions started together', () => {
  let app: TestApp;
  let workspaceId: string;
  before(async () => {
    app = await startApp();
    ({ workspaceId } = await app.workspaceWithKey());
  });
  after(() => app.close());

  // PostgreSQL numbers its placeholders.
  const native = (sql: string) => (dialectOf(app.deps.db) === 'postgres' ? numbered(sql) : sql);
  let insert: string;
  let count: string;
  before(() => {
    insert = native('INSERT INTO events (id, workspace_id, type, object_id, payload, created_at) VALUES (?, ?, ?, ?, ?, ?)');
    count = native('SELECT COUNT(*) AS n FROM events WHERE type = ?');
  });

  it('commits each that succeeds and none that fails, and a failure costs no other its write', async () => {
    const type = `test.group.${Date.now()}`;
    const embedded = backend().kind === 'embedded';
    // What each write saw of the writes before it: in its own transaction, and committed.
    const seen: Array<{ inside: number; committed: number }> = [];
    const writes = Array.from({ length: 12 }, (_, i) =>
      writeTransaction(app.deps.db, async (tx) => {
        await tx.run(insert, [`evt_group_${type}_${i}`, workspaceId, type, `obj_${i}`, '{}', Date.now()]);
        const [inside] = await tx.all(count, [type]);
        // (On a server a read beside the transaction would wait for a connection the others hold.)
        if (embedded) {
          const [committed] = await app.deps.reads.all(count, [type]);
          seen.push({ inside: Number(inside?.n), committed: Number(committed?.n) });
        }
        if (i % 3 === 1) throw new Error(`refused ${i}`);
        return i;
      }),
    );
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).to.deep.equal(
      Array.from({ length: 12 }, (_, i) => (i % 3 === 1 ? `refused ${i}` : i)),
    );
    const rows = (await app.deps.db('events').where({ type }).orderBy('object_id').select('object_id')) as Array<{ object_id: string }>;
    expect(rows.map((r) => r.object_id).sort()).to.deep.equal(
      Array.from({ length: 12 }, (_, i) => i)
        .filter((i) => i % 3 !== 1)
        .map((i) => `obj_${i}`)
        .sort(),
    );
    if (embedded) {
      // They ran in one transaction at first: one saw another's row before it was committed.
      expect(seen.some((s) => s.inside > s.committed + 1)).to.equal(true);
    }
  });

  it('answers a write that runs after a group as it would alone', async () => {
    const type = `test.group.after.${Date.now()}`;
    const first = await Promise.all(Array.from({ length: 5 }, (_, i) => writeTransaction(app.deps.db, (tx) => tx.run(insert, [`evt_after_${type}_${i}`, workspaceId, type, `a_${i}`, '{}', Date.now()]))));
    expect(first).to.have.length(5);
    await writeTransaction(app.deps.db, (tx) => tx.run(insert, [`evt_after_${type}_last`, workspaceId, type, 'a_last', '{}', Date.now()]));
    const failing = writeTransaction(app.deps.db, async (tx) => {
      await tx.run(insert, [`evt_after_${type}_last`, workspaceId, type, 'a_dup', '{}', Date.now()]);
    });
    await failing.then(
      () => expect.fail('a duplicate id was written'),
      (error: unknown) => expect(error).to.be.instanceOf(Error),
    );
    const [row] = await app.deps.reads.all(count, [type]);
    expect(Number(row?.n)).to.equal(6);
  });

  it('writes nothing of a write whose later INSERT fails (MySQL and PostgreSQL send them together), and its connection serves the next writes clean', async () => {
    const type = `test.together.${Date.now()}`;
    const event = (id: string) => [`evt_together_${type}_${id}`, workspaceId, type, `t_${id}`, '{}', Date.now()];
    const failing = writeTransaction(app.deps.db, async (tx) => {
      await tx.run(insert, event('a'));
      await tx.run(insert, event('b'));
      await tx.run(insert, event('a'));
    });
    await failing.then(
      () => expect.fail('a duplicate id was written'),
      (error: unknown) => expect(isDuplicateKey(error), String(error)).to.equal(true),
    );
    expect(Number((await app.deps.reads.all(count, [type]))[0]?.n)).to.equal(0);
    // A read inside a write sees the INSERTs before it, which are sent first.
    const inside = await writeTransaction(app.deps.db, async (tx) => {
      await tx.run(insert, event('c'));
      await tx.run(insert, event('d'));
      const [row] = await tx.all(count, [type]);
      await tx.run(insert, event('e'));
      return Number(row?.n);
    });
    expect(inside).to.equal(2);
    // More writes than the pool has connections, one after another: had the failed write's
    // transaction been left open on its connection, the next one there would have committed
    // its first row (MySQL commits an open transaction at START TRANSACTION).
    for (let i = 0; i < 12; i++) await writeTransaction(app.deps.db, (tx) => tx.run(insert, event(`n${i}`)));
    const rows = (await app.deps.db('events').where({ type }).select('object_id')) as Array<{ object_id: string }>;
    expect(rows.map((r) => r.object_id).sort()).to.deep.equal(['t_c', 't_d', 't_e', ...Array.from({ length: 12 }, (_, i) => `t_n${i}`)].sort());
  });
});
