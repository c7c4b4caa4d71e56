import { expect } from 'chai';
import type { Knex } from 'knex';
import { dialectOf } from '../../src/db/dialect.js';
import { internal, person, type Person } from '../helpers/admin.js';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
import { createDb } from '../../src/db/connect.js';
import { loadConfig } from '../../src/common/config.js';
import { backend } from '../helpers/backend.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The deadlocks the database has counted since it started, or undefined where it counts none
 * (SQLite has one writer at a time). InnoDB counts at once. PostgreSQL's backends add theirs to
 * its statistics when they go idle, a second or more later, or when they exit: so it is read
 * once the service's connections have closed.
 */
async function deadlocks(db: Knex): Promise<number | undefined> {
  const dialect = dialectOf(db);
  if (dialect === 'postgres') {
    await waitFor(async () => {
      const { rows } = (await db.raw('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')) as { rows: Array<{ n: string }> };
      return Number(rows[0]?.n) === 0;
    }, 10_000, "the service's connections to close");
    return db.transaction(async (trx) => {
      await trx.raw('SELECT pg_stat_clear_snapshot()');
      const { rows } = (await trx.raw('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')) as { rows: Array<{ deadlocks: string }> };
      return Number(rows[0]?.deadlocks);
    });
  }
  if (dialect === 'mysql') {
    const [rows] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")) as [Array<{ Value: string }>];
    return Number(rows[0]?.Value);
  }
  return undefined;
}

/**
 * docs/reference.md section 15: rolling, revoking and changing keys and the workspace's key
 * policy all lock the workspace, then the key, then the counter of changes (auth_changes), then
 * write the audit row. Taken in different orders, 8 such flows at once on PostgreSQL deadlocked
 * 77 times and took seconds where one takes milliseconds (the retries saved every answer).
 */
describe('changes to keys and the key policy, run concurrently, take their locks in one order', () => {
  let app: TestApp;
  let alice: Person;
  /** A connection of the test's own, to count the database's deadlocks. */
  let counter: Knex;
  /** The database's count before the service connected. */
  let counted: number | undefined;
  let closed = false;

  before(async () => {
    counter = createDb(loadConfig(backend().env).database);
    counted = await deadlocks(counter);
    app = await startApp();
    alice = await person(app, { plan: 'enterprise' });
  });
  after(async () => {
    if (!closed) await app?.close();
    await counter?.destroy();
  });

  const call = async (path: string, method: string, json?: Json) => {
    const res = await internal(app, path, { method, cookie: alice.cookie, ...(json !== undefined ? { json } : {}) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Json };
  };

  /** One operator's flow: make a key, roll it, change its allowlist, revoke it, and set the workspace's key policy between. */
  async function flow(n: number): Promise<number[]> {
    const made = await call('/keys', 'POST', { name: `flow ${n}`, scopes: ['read:deals'], expires_in_days: 30 });
    const rolled = await call(`/keys/${String(made.body.id)}/roll`, 'POST', { overlap_seconds: 60, expires_in_days: 30 });
    const patched = await call(`/keys/${String(rolled.body.id)}`, 'PATCH', { allowed_ips: [`10.0.${n}.0/24`] });
    const policy = await call('/workspace', 'PATCH', { max_key_lifetime_days: n % 2 === 0 ? 365 : null });
    const revoked = await call(`/keys/${String(rolled.body.id)}`, 'DELETE');
    const revokedOld = await call(`/keys/${String(made.body.id)}`, 'DELETE');
    return [made.status, rolled.status, patched.status, policy.status, revoked.status, revokedOld.status];
  }

  it('8 flows of key create, roll, PATCH, workspace PATCH and revoke at once: every answer right, and the database counts no deadlock', async () => {
    for (let round = 0; round < 3; round++) {
      const statuses = await Promise.all(Array.from({ length: 8 }, (_, n) => flow(round * 8 + n)));
      for (const answer of statuses) expect(answer).to.deep.equal([201, 201, 200, 200, 204, 204]);
    }
    await app.close();
    closed = true;
    const after = await deadlocks(counter);
    if (counted !== undefined) expect(after! - counted, 'deadlocks the database detected').to.equal(0);
    // Everything is in the audit log, once each.
    const audit = await counter('audit_log').where({ workspace_id: alice.workspaceId }).select('action');
    const counts = audit.reduce<Record<string, number>>((acc, { action }: { action: string }) => ({ ...acc, [action]: (acc[action] ?? 0) + 1 }), {});
    expect(counts).to.include({ 'key.created': 24, 'key.rolled': 24, 'key.updated': 24, 'key.revoked': 48 });
  });
});
