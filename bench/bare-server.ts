/**
 * The baselines: bare Koa routes doing what the API does for a request, with no
 * authentication, rate limit, validation or error handling.
 *   GET  /deals  the statement of GET /v1/deals?limit=50, prepared once and run by the driver
 *                (better-sqlite3, or mysql2's execute: no knex), rows mapped to the same JSON.
 *   POST /deals  the same insert of a deal plus the inserts of its event, of the event's entry in
 *                the fan-out's queue (`events_pending`) and of its search terms (the words of its
 *                title: `q` is part of the contract), in one knex transaction, as a hand-written
 *                route would do it.
 *   POST /deals?driver  the same four inserts as statements compiled once and run by the driver
 *                in a transaction of its own making (db/tx.ts), as the API's writes run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { loadConfig } from '../src/common/config.js';
import { createDb } from '../src/db/connect.js';
import { newId } from '../src/common/ids.js';
import { createReads } from '../src/db/reads.js';
import { toPage } from '../src/kernel/query/keyset.js';
import { loadRegistry } from '../src/kernel/registry/registry.js';
import { toObject } from '../src/kernel/storage/rows.js';
import { args, LIMIT, named, param, prepare, rowsArgs, type Prepared } from '../src/db/prepared.js';
import { termRows } from '../src/kernel/storage/search-index.js';
import { writeTransaction } from '../src/db/tx.js';

const config = loadConfig();
const db = createDb(config.database);
const registry = await loadRegistry(config.pluginsDir);
const deals = registry.byName.get('deal');
const workspaceId = process.env.BENCH_WORKSPACE ?? '';
if (!deals || !workspaceId) throw new Error('BENCH_WORKSPACE and the deal plugin are needed');
const reads = createReads(db, config.database);
const page = prepare(
  db('deals')
    .where('workspace_id', param('workspace_id'))
    .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .limit(LIMIT)
    .select(deals.columns),
);
const insertDeal = prepare(db('deals').insert(named(['id', 'workspace_id', ...deals.columns.slice(1)])));
const insertEvent = prepare(db('events').insert(named(['id', 'workspace_id', 'type', 'object_id', 'payload', 'created_at'])));
const insertPending = prepare(db('events_pending').insert(named(['event_id', 'workspace_id', 'type', 'object_id', 'created_at'])));
const TERM_COLUMNS = ['workspace_id', 'resource', 'term', 'created_at', 'object_id'];
const insertTerms = new Map<number, Prepared>();
const insertTermsOf = (count: number) => {
  let statement = insertTerms.get(count);
  if (!statement) insertTerms.set(count, (statement = prepare(db('search_terms').insert(Array.from({ length: count }, () => named(TERM_COLUMNS))))));
  return statement;
};

const app = new Koa();
app.use(koaBody());
app.use(async (ctx) => {
  if (ctx.method === 'GET') {
    const rows = await reads.all(page.sql, args(page, { workspace_id: workspaceId, limit: 51 }));
    ctx.body = toPage(rows, 50, { resource: 'deal', sort: '-created_at', column: 'created_at' }, (row) => toObject(deals, row, workspaceId));
    return;
  }
  const body = ctx.request.body as Record<string, unknown>;
  const now = Date.now();
  const row = { id: newId('deal_'), workspace_id: workspaceId, title: body.title, amount: body.amount ?? null, currency: body.currency ?? null, stage: body.stage ?? 'lead', client_id: null, expected_close_date: null, created_at: now, updated_at: now, version: 1 };
  const object = { ...row, workspace_id: undefined, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString() };
  const eventId = newId('evt_');
  const event = { id: eventId, workspace_id: workspaceId, type: 'deal.created', object_id: row.id, payload: JSON.stringify({ id: eventId, type: 'deal.created', created_at: object.created_at, data: { object, previous: {} } }), created_at: now };
  const pending = { event_id: eventId, workspace_id: workspaceId, type: event.type, object_id: row.id, created_at: now };
  const terms = termRows(deals, workspaceId, [row]);
  if (ctx.querystring === 'driver') {
    await writeTransaction(db, async (tx) => {
      await tx.run(insertDeal.sql, args(insertDeal, row));
      await tx.run(insertEvent.sql, args(insertEvent, event));
      await tx.run(insertPending.sql, args(insertPending, pending));
      if (terms.length > 0) await tx.run(insertTermsOf(terms.length).sql, rowsArgs(insertTermsOf(terms.length), terms));
    });
  } else {
    await db.transaction(async (trx) => {
      await trx('deals').insert(row);
      await trx('events').insert(event);
      await trx('events_pending').insert(pending);
      if (terms.length > 0) await trx('search_terms').insert(terms);
    });
  }
  ctx.status = 201;
  ctx.body = object;
});
const server = http.createServer(app.callback()).listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port }));
});
process.on('SIGTERM', () => server.close(() => db.destroy().then(() => process.exit(0))));
