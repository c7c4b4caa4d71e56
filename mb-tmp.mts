import knexLib from 'knex';
import { migrateLatest } from './src/db/migrate.ts';
import { loadConfig } from './src/common/config.ts';
import { createDb } from './src/db/connect.ts';
import fs from 'node:fs';
fs.rmSync('/tmp/mb.db', { force: true });
const config = loadConfig({ DATABASE_URL: 'sqlite:/tmp/mb.db' });
const db = createDb(config.database);
await migrateLatest(db, config.migrationsDirs);
import { createWorkspace } from './src/auth/keys.ts';
const ws = await createWorkspace(db, { name: 'x', plan: 'pro' });
await db('api_keys').insert({ id: 'key_1', workspace_id: ws.id, name: 'k', prefix: 'p', token_hash: 'h', scopes: '[]', rate_limit: 1, created_at: 0 });
const COLUMNS = ['key_id', 'at', 'method', 'route', 'path', 'status', 'status_class', 'error_code', 'duration_us', 'request_id', 'ip'];
const row = () => ['key_1', Date.now(), 'GET', '/v1/deals', '/v1/deals', 200, 2, null, 1234, 'c7b5948f-c987-4a9d-a86e-d27ee0873ec9', '127.0.0.1'];
for (const n of [500, 100]) {
  const sql = `INSERT INTO key_requests (${COLUMNS.join(', ')}) VALUES ${Array.from({ length: n }, () => `(${COLUMNS.map(() => '?').join(', ')})`).join(', ')}`;
  for (let rep = 0; rep < 3; rep++) {
    let t = performance.now();
    for (let b = 0; b < 2000 / n; b++) await db.raw(sql, Array.from({ length: n }, row).flat());
    console.log('knex raw', n, 'rows/stmt: 2000 rows in', (performance.now() - t).toFixed(1), 'ms');
  }
  const conn = await (db.client as any).acquireConnection();
  const stmt = conn.prepare(sql);
  for (let rep = 0; rep < 3; rep++) {
    let t = performance.now();
    conn.prepare('BEGIN').run();
    for (let b = 0; b < 2000 / n; b++) stmt.run(...Array.from({ length: n }, row).flat());
    conn.prepare('COMMIT').run();
    console.log('driver', n, 'rows/stmt: 2000 rows in', (performance.now() - t).toFixed(1), 'ms');
  }
  await (db.client as any).releaseConnection(conn);
}
await db.destroy();
