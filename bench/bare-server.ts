/**
 * The baseline: a bare Koa route running the same query as GET /v1/deals?limit=50 (same knex
 * settings, same keyset query, same JSON) with no authentication, rate limit or validation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { loadConfig } from '../src/config.js';
import { createDb } from '../src/db/connect.js';
import { listPage } from '../src/kernel/list.js';
import { loadRegistry } from '../src/kernel/registry.js';

const config = loadConfig();
const db = createDb(config.database);
const registry = await loadRegistry(config.pluginsDir);
const deals = registry.byName.get('deal');
const workspaceId = process.env.BENCH_WORKSPACE ?? '';
if (!deals || !workspaceId) throw new Error('BENCH_WORKSPACE and the deal plugin are needed');

const app = new Koa();
app.use(async (ctx) => {
  ctx.body = await listPage(db, deals, workspaceId, { limit: 50, sort: '-created_at' });
});
const server = http.createServer(app.callback()).listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => server.close(() => db.destroy().then(() => process.exit(0))));
