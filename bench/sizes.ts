/**
 * Storage per row (what docs/operator.md quotes): 3,000 deals written through the
 * API, each delivered to two subscriptions at the first attempt by the server's inline worker,
 * then the size of each table (data and indexes, as the database reports it) divided by its
 * rows. Sizes, not speed: it may run on a busy machine.
 * Usage: npm run bench:sizes   [BENCH_DATABASE_URL=mysql://... | postgres://... | sqlite:/tmp/sizes.db]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import { dialectOf } from '../src/db/dialect.js';
import { BACKEND, freshDatabase, load, start } from './lib.js';

const WRITES = Number(process.env.BENCH_WRITES ?? 3000);
const TABLES = ['deals', 'search_terms', 'events', 'webhook_deliveries', 'webhook_attempts'];

const receiver = http.createServer((req, res) => req.resume().on('end', () => res.end('ok')));
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const { db, tokens } = await freshDatabase(['write:deals', 'webhooks:manage']);
const server = await start('src/server.ts', { WORKER: 'inline', WEBHOOK_ALLOW_PRIVATE: 'true' });
try {
  for (const n of [1, 2]) {
    const res = await fetch(`${server.url}/v1/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: `${hook}/${n}`, events: ['deal.created'] }) });
    if (res.status !== 201) throw new Error(`subscription ${n}: ${res.status} ${await res.text()}`);
  }
  await load(`${server.url}/v1/deals`, tokens, 600, {
    connections: 10,
    method: 'POST',
    amount: WRITES,
    vary: (i) => ({ path: '/v1/deals', body: JSON.stringify({ title: `Website redesign for client number ${i}`, amount: 125000 + i, currency: 'EUR', stage: 'qualified' }) }),
  });
  const rows = (table: string) => db(table).count({ n: '*' }).first() as Promise<{ n: number | string }>;
  for (;;) {
    const [{ n: attempts }, { n: pending }] = [await rows('webhook_attempts'), (await db('webhook_deliveries').whereNot('status', 'succeeded').count({ n: '*' }).first()) as { n: number | string }];
    if (Number(attempts) >= 2 * WRITES && Number(pending) === 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  console.log('\nStorage after %d deal writes delivered to two subscriptions, on %s (data and indexes)', WRITES, BACKEND);
  for (const table of TABLES) {
    const count = Number((await rows(table)).n);
    const bytes = await sizeOf(db, table);
    console.log('  %s %s rows, %s KB, %s bytes a row', table.padEnd(20), String(count).padStart(7), (bytes / 1024).toFixed(0).padStart(7), count ? (bytes / count).toFixed(0) : '-');
  }
} finally {
  server.child.kill('SIGTERM');
  receiver.close();
  await db.destroy();
}

/** A table's size with its indexes, after the database has brought its statistics up to date. */
async function sizeOf(db: Knex, table: string): Promise<number> {
  switch (dialectOf(db)) {
    case 'postgres': {
      await db.raw('VACUUM ANALYZE ??', [table]);
      const { rows } = (await db.raw('SELECT pg_total_relation_size(?::regclass) AS bytes', [table])) as { rows: Array<{ bytes: number }> };
      return Number(rows[0]?.bytes);
    }
    case 'mysql': {
      await db.raw('ANALYZE TABLE ??', [table]);
      const [rows] = (await db.raw('SELECT data_length + index_length AS bytes FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [table])) as [Array<{ bytes: number }>];
      return Number(rows[0]?.bytes);
    }
    case 'sqlite': {
      const rows = (await db.raw("SELECT SUM(pgsize) AS bytes FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?)", [table, table])) as Array<{ bytes: number }>;
      return Number(rows[0]?.bytes);
    }
  }
}
