import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { loadPlugins } from '../../src/boot.js';
import { loadConfig, ROOT_DIR } from '../../src/common/config.js';
import { createDb } from '../../src/db/connect.js';
import { dialectOf } from '../../src/db/dialect.js';
import { CASELESS_COLLATION } from '../../src/db/dialects/index.js';
import { insertSamples } from '../../src/demo/samples.js';
import { kinds } from '../../src/kernel/model/kinds.js';
import { among } from '../../src/kernel/query/list.js';
import { backend, isolatedDatabase } from '../helpers/backend.js';
import { checkedFetcher } from '../helpers/contract.js';
import { waitFor } from '../helpers/app.js';
import { admin, run, startServer } from '../helpers/processes.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Api = Awaited<ReturnType<typeof checkedFetcher>>;
type Call = (route: string, method?: string, json?: unknown, headers?: Record<string, string>) => Promise<{ status: number; headers: Headers; body: Json }>;

const FIXTURE = path.join(ROOT_DIR, 'test', 'fixtures', 'author', 'tasks.ts');
/** The fixture's last field, after which a test adds its own. */
const CLIENT_FIELD = "    client_id: ref('client', 'The client it is for.'),";

describe('npm run migrate:make: tables from the declarations (an outside author\'s plugin, no migration of its own)', function () {
  // A hang guard, not a speed figure: a test here starts a process a step (migrate:make, migrate,
  // the server), a dozen or more in turn; the longest took 28-31 s on an idle 2-core machine and
  // over 60 s with the three backends' suites run side by side.
  this.timeout(180_000);
  let root: string;
  let plugins: string;
  let migrations: string;
  let database: Awaited<ReturnType<typeof isolatedDatabase>>;
  let env: Record<string, string>;
  const make = (args: string[] = []) => run('src/cli/migrate-make.ts', args, env);
  const written = () => fs.readdirSync(migrations).sort();
  /** Runs migrate:make, which must say `summary`, and answers the migration it wrote last. */
  const madeSaying = async (summary: string) => {
    const res = await make();
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.contain(summary);
    const file = written().at(-1)!;
    return { file, text: fs.readFileSync(path.join(migrations, file), 'utf8') };
  };
  /** A plugin's source with `lines` added after its last field. */
  const withFields = (source: string, lines: string) => {
    expect(source).to.contain(CLIENT_FIELD);
    return source.replace(CLIENT_FIELD, `${CLIENT_FIELD}\n${lines}`);
  };

  before(async () => {
    // Under the checkout, beside plugins/, so that 'workspace-api/plugin' resolves as it does for plugins/.
    root = fs.mkdtempSync(path.join(ROOT_DIR, '.drop-in-make-'));
    plugins = path.join(root, 'plugins');
    migrations = path.join(root, 'migrations');
    fs.mkdirSync(plugins);
    fs.mkdirSync(migrations);
    for (const file of fs.readdirSync(path.join(ROOT_DIR, 'plugins'))) fs.copyFileSync(path.join(ROOT_DIR, 'plugins', file), path.join(plugins, file));
    database = await isolatedDatabase('make');
    env = { ...database.env, PLUGINS_DIR: plugins, MIGRATIONS_DIR: migrations };
  });
  after(async () => {
    await database?.drop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('writes nothing for the shipped plugins, whose migrations are there, and says so', async () => {
    const res = await make();
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.contain('nothing to do');
    expect(written()).to.deep.equal([]);
  });

  it('stops the server naming the missing table and the command, before migrate:make has run', async () => {
    fs.copyFileSync(FIXTURE, path.join(plugins, 'tasks.ts'));
    const res = await run('src/server.ts', [], { ...env, PORT: '0' });
    expect(res.code).to.equal(1);
    expect(res.stderr).to.match(/Plugin error: plugin .*tasks\.ts: table "tasks" does not exist: run `npm run migrate:make`/);
  });

  it('writes one migration creating the table with its indexes, prints it, and writes nothing the second time', async () => {
    const res = await make();
    expect(res.code, res.stderr).to.equal(0);
    const [file, ...more] = written();
    expect(more).to.deep.equal([]);
    expect(file).to.match(/^\d{14}_tasks\.ts$/);
    expect(res.stdout).to.contain(`wrote ${path.relative(ROOT_DIR, path.join(migrations, file!))}`);
    // Two keyset indexes of the kernel's sorts, three of its filters, three of the fields that sort (due_at, effort, minutes_logged).
    expect(res.stdout).to.contain('create table tasks (13 columns, 8 indexes)');
    const text = fs.readFileSync(path.join(migrations, file!), 'utf8');
    expect(text).to.contain("t.bigInteger('due_at').nullable();");
    expect(text).to.contain("t.boolean('done').notNullable();");
    expect(text).to.contain("t.text('journal', 'mediumtext').nullable();");
    expect(text).to.contain("t.index(['workspace_id', 'status', 'created_at', 'id'], 'tasks_ws_status');");
    expect(text).to.contain("t.index(['workspace_id', 'effort', 'id'], 'tasks_by_effort');");
    expect(text).not.to.match(/from '\.\.?\//);
    const again = await make();
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.contain('nothing to do');
    expect(written()).to.have.length(1);
  });

  /**
   * Runs `test` against a server on the plugins, with `call` speaking as a key (of a new
   * workspace) holding `scopes`, and `keyFor` making more keys there.
   */
  async function serving(test: (t: { call: Call; api: Api; keyFor: (scopes: string, mode?: 'live' | 'test') => Promise<string>; output: () => string; workspace: string }) => Promise<void>, scopes = 'read:tasks,write:tasks'): Promise<void> {
    const server = await startServer({ ...env });
    try {
      const ws = await admin(['workspace', 'create', '--name', 'Author', '--plan', 'pro', '--json'], env);
      const workspace = (JSON.parse(ws.stdout) as { id: string }).id;
      const keyFor = async (granted: string, mode: 'live' | 'test' = 'live') => {
        const key = await admin(['key', 'create', '--workspace', workspace, '--name', 'tasks', '--scopes', granted, '--mode', mode, '--json'], env);
        expect(key.code, key.stderr).to.equal(0);
        return (JSON.parse(key.stdout) as { token: string }).token;
      };
      const token = await keyFor(scopes);
      const api = await checkedFetcher(server.url);
      const call: Call = async (route, method = 'GET', json, headers = {}) => {
        const res = await api(route, { method, headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}), ...headers }, ...(json ? { body: JSON.stringify(json) } : {}) });
        const text = await res.text();
        return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Json };
      };
      await test({ call, api, keyFor, output: () => server.output(), workspace });
    } finally {
      await server.stop();
    }
  }

  it('serves the plugin end to end once started: a writable datetime, a boolean default, the state machine', async () => {
    await serving(async ({ call }) => {
      const client = await call('/v1/clients', 'POST', { name: 'Acme' });
      const task = await call('/v1/tasks', 'POST', { title: 'Send the contract', due_at: '2026-12-01T17:00:00+02:00', effort: 30, client_id: client.body.id });
      expect(task.status, JSON.stringify(task.body)).to.equal(201);
      expect(task.body).to.include({ title: 'Send the contract', due_at: '2026-12-01T15:00:00.000Z', done: false, effort: 30, status: 'open' });
      // A leap second is the first instant of the next minute; an offset may come without its minutes (both were 500s).
      const leap = await call('/v1/tasks', 'POST', { title: 'At midnight', due_at: '2026-12-31T23:59:60Z' });
      expect(leap.status, JSON.stringify(leap.body)).to.equal(201);
      expect(leap.body.due_at).to.equal('2027-01-01T00:00:00.000Z');
      const hours = await call(`/v1/tasks/${leap.body.id}`, 'PATCH', { due_at: '2027-01-01T02:00:00+02' });
      expect(hours.status, JSON.stringify(hours.body)).to.equal(200);
      expect(hours.body.due_at).to.equal('2027-01-01T00:00:00.000Z');
      expect((await call('/v1/tasks?due_at[gte]=2026-12-31T23:59:60Z')).body.data.map((t: Json) => t.id)).to.deep.equal([leap.body.id]);
      expect((await call(`/v1/tasks?status=open&client_id=${client.body.id}`)).body.data.map((t: Json) => t.id)).to.deep.equal([task.body.id]);
      expect((await call(`/v1/tasks/${task.body.id}`, 'PATCH', { status: 'closed', done: true })).body).to.include({ status: 'closed', done: true });
      // A boolean declared a filter: true or false, compared as stored on each backend.
      expect((await call('/v1/tasks?done=true')).body.data.map((t: Json) => t.id)).to.deep.equal([task.body.id]);
      expect((await call('/v1/tasks?done=false')).body.data.map((t: Json) => t.id)).to.deep.equal([leap.body.id]);
      expect((await call(`/v1/tasks?done=false&client_id=${client.body.id}`)).body.data).to.deep.equal([]);
      for (const written of ['yes', '1', '', 'TRUE']) {
        const refused = await call(`/v1/tasks?done=${written}`);
        expect(refused.status, written).to.equal(400);
        expect(refused.body.errors, written).to.deep.equal([{ parameter: 'done', message: 'must be true or false, given once' }]);
      }
      expect((await call('/v1/tasks?done=true&done=false')).status).to.equal(400);
      expect((await call(`/v1/tasks/${task.body.id}`, 'PATCH', { status: 'open' })).status).to.equal(409);
      expect((await call('/v1/tasks', 'POST', { title: 'x', effort: 101 })).status).to.equal(422);
      // An integer without declared bounds takes what JSON carries exactly, and no more (PostgreSQL and MySQL answered 500 past 64 bits).
      const most = Number.MAX_SAFE_INTEGER;
      for (const minutes of [most, -most]) {
        const logged = await call('/v1/tasks', 'POST', { title: 'Counted', minutes_logged: minutes });
        expect(logged.status, JSON.stringify(logged.body)).to.equal(201);
        expect((await call(`/v1/tasks/${logged.body.id}`)).body.minutes_logged).to.equal(minutes);
      }
      for (const minutes of [most + 1, 1e300, -1e20]) {
        const refused = await call('/v1/tasks', 'POST', { title: 'Too many', minutes_logged: minutes });
        expect(refused.status, String(minutes)).to.equal(422);
        expect(refused.body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/minutes_logged']);
        expect((await call(`/v1/tasks/${task.body.id}`, 'PATCH', { minutes_logged: minutes })).status).to.equal(422);
      }
      expect((await call('/v1/tasks?q=too')).body.data).to.deep.equal([]);
      // Text past what MySQL's TEXT holds (65,535 bytes), up to the declared 100,000 characters, and no more.
      const journal = 'ä'.repeat(40_000) + 'n'.repeat(60_000);
      const kept = await call('/v1/tasks', 'POST', { title: 'Long journal', journal });
      expect(kept.status, JSON.stringify(kept.body).slice(0, 300)).to.equal(201);
      expect((await call(`/v1/tasks/${kept.body.id}`)).body.journal).to.equal(journal);
      expect((await call(`/v1/tasks/${kept.body.id}`, 'PATCH', { journal: `${journal}!` })).status).to.equal(422);
    }, 'read:tasks,write:tasks,write:clients');
  });

  it('fills a demo workspace with sample tasks that read back as the contract says (a writable datetime stored as epoch milliseconds)', async () => {
    await serving(async ({ call, workspace }) => {
      const registry = await loadPlugins(plugins);
      const db = createDb(loadConfig({ ...backend().env, ...env }).database);
      try {
        await insertSamples(db, registry, workspace, 12, { seed: 5 });
      } finally {
        await db.destroy();
      }
      // The checked fetcher holds each answer to the OpenAPI document: a sample that read back
      // as no RFC 3339 time (the demo stored "2026-12-31T09:30:00.000Z 1", and the list was a 500) fails it.
      const list = await call('/v1/tasks?limit=12');
      expect(list.status, JSON.stringify(list.body)).to.equal(200);
      expect(list.body.data).to.have.length(12);
      const due = list.body.data.map((t: Json) => t.due_at).filter((v: unknown) => v !== null);
      expect(due.length).to.be.greaterThan(0);
      for (const value of due) expect(value).to.match(/^2026-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
      expect(list.body.data.map((t: Json) => typeof t.done)).to.deep.equal(Array(12).fill('boolean'));
      const later = await call(`/v1/tasks?due_at[gte]=${encodeURIComponent(due[0])}&limit=12`);
      expect(later.status).to.equal(200);
      expect(later.body.data.map((t: Json) => t.due_at)).to.include(due[0]);
    });
  });

  it('runs the plugin\'s hooks in the write\'s transaction, and its handler around the generated one', async () => {
    await serving(async ({ call, output }) => {
      // validate: its problem answers 422 with its pointer, on create and on update (seeing `before`).
      const refused = await call('/v1/tasks', 'POST', { title: 'Big', effort: 80 });
      expect(refused.status).to.equal(422);
      expect(refused.body.code).to.equal('validation_failed');
      expect(refused.body.errors).to.deep.equal([{ pointer: '/due_at', message: 'is required when effort is over 50' }]);
      // beforeWrite: sets fields of the stored object.
      const task = await call('/v1/tasks', 'POST', { title: '  Big  ', effort: 80, due_at: '2026-12-01T00:00:00Z' });
      expect(task.status, JSON.stringify(task.body)).to.equal(201);
      expect(task.body.title).to.equal('Big');
      expect((await call(`/v1/tasks/${task.body.id}`, 'PATCH', { due_at: null })).body.errors).to.deep.equal([{ pointer: '/due_at', message: 'is required when effort is over 50' }]);
      const closed = await call(`/v1/tasks/${task.body.id}`, 'PATCH', { status: 'closed' });
      expect(closed.body).to.include({ status: 'closed', done: true });
      // The handler around the generated get: the generated answer, with its header.
      const got = await call(`/v1/tasks/${task.body.id}`);
      expect(got.body).to.deep.equal(closed.body);
      expect(got.headers.get('x-task-handler')).to.equal('extended');
      // A hook that throws: 500, and nothing written (no row, no event).
      const list = async () => (await call('/v1/tasks?limit=100')).body.data.length as number;
      const rows = await list();
      const failed = await call('/v1/tasks', 'POST', { title: 'boom' });
      expect(failed.status).to.equal(500);
      expect(await list()).to.equal(rows);
      // A hook that sets a value its field does not take (a title over 200): 500, nothing written, and the log says which.
      const overflow = await call('/v1/tasks', 'POST', { title: 'overflow' });
      expect(overflow.status).to.equal(500);
      expect(await list()).to.equal(rows);
      const patched = await call(`/v1/tasks/${task.body.id}`, 'PATCH', { title: 'overflow' });
      expect(patched.status).to.equal(500);
      expect((await call(`/v1/tasks/${task.body.id}`)).body).to.deep.equal(closed.body);
      await waitFor(async () => output().includes('task beforeWrite returned a row its fields do not take: /title must NOT have more than 200 characters'), 5000, 'the hook\'s refusal in the log');
    });
  });

  it('serves the plugin\'s actions: validated, idempotent, documented, writing as a PATCH does (events included)', async () => {
    await serving(async ({ call, api, keyFor }) => {
      const readerToken = await keyFor('read:tasks');
      const doc = (await call('/v1/openapi.json')).body;
      expect(doc.paths['/tasks/{id}/close'].post.operationId).to.equal('closeTask');
      expect(doc.paths['/tasks/{id}/close'].post.security).to.deep.equal([{ bearerAuth: ['write:tasks'] }]);
      expect(doc.paths['/tasks/{id}/estimate'].post.summary).to.equal('Set the effort');

      const task = await call('/v1/tasks', 'POST', { title: 'Ship it', effort: 10 });
      const estimated = await call(`/v1/tasks/${task.body.id}/estimate`, 'POST', { effort: 40 });
      expect(estimated.status, JSON.stringify(estimated.body)).to.equal(200);
      expect(estimated.body.effort).to.equal(40);
      expect((await call(`/v1/tasks/${task.body.id}/estimate`, 'POST', { effort: 101 })).status).to.equal(422);
      expect((await call(`/v1/tasks/${task.body.id}/estimate`, 'POST', {})).body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/effort']);
      expect(doc.paths['/tasks/{id}/close'].post.requestBody.content['application/json'].schema.required).to.deep.equal(['reason']);
      expect((await call(`/v1/tasks/${task.body.id}/close`, 'POST', {})).body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/reason']);
      expect((await call(`/v1/tasks/${task.body.id}/close`, 'POST', { reason: 'x', colour: 'red' })).status).to.equal(422);
      expect((await call('/v1/tasks/task_doesnotexist/close', 'POST', { reason: 'x' })).status).to.equal(404);
      const refused = await api(`/v1/tasks/${task.body.id}/close`, { method: 'POST', headers: { authorization: `Bearer ${readerToken}`, 'content-type': 'application/json' }, body: '{"reason":"x"}' });
      expect(refused.status).to.equal(403);

      const once = { 'idempotency-key': 'close-ship-it' };
      const closed = await call(`/v1/tasks/${task.body.id}/close`, 'POST', { reason: 'shipped' }, once);
      expect(closed.status, JSON.stringify(closed.body)).to.equal(200);
      expect(closed.body).to.include({ status: 'closed', done: true, title: 'Ship it (shipped)' });
      const replayed = await call(`/v1/tasks/${task.body.id}/close`, 'POST', { reason: 'shipped' }, once);
      expect(replayed.body).to.deep.equal(closed.body);
      expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
      expect((await call(`/v1/tasks/${task.body.id}/close`, 'POST', { reason: 'other' }, once)).status).to.equal(409);
      // The same key sent five times at once: one runs, the others replay its answer (none is a 500).
      const other = await call('/v1/tasks', 'POST', { title: 'Race', effort: 10 });
      const racing = await Promise.all(Array.from({ length: 5 }, () => call(`/v1/tasks/${other.body.id}/estimate`, 'POST', { effort: 45 }, { 'idempotency-key': 'race' })));
      expect(racing.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
      expect(new Set(racing.map((r) => JSON.stringify(r.body))).size).to.equal(1);
      expect(racing.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).to.have.length(1);
      // Closed is final: the action's update meets the state machine as a PATCH would.
      const again = await call(`/v1/tasks/${task.body.id}/reopen`, 'POST', {});
      expect(again.status).to.equal(409);
      expect(again.body.code).to.equal('invalid_transition');

      const events = (await call(`/v1/event-log?type=task.*&sort=created_at`)).body.data.filter((e: Json) => e.data.object.id === task.body.id);
      // The close's two events share its moment: compared without their order.
      expect(events.map((e: Json) => e.type).sort()).to.deep.equal(['task.closed', 'task.created', 'task.updated', 'task.updated']);

      // A test key's actions reach only test objects (docs/reference.md section 21).
      const testToken = await keyFor('read:tasks,write:tasks', 'test');
      const asTest = async (route: string, json: Json) => {
        const res = await api(route, { method: 'POST', headers: { authorization: `Bearer ${testToken}`, 'content-type': 'application/json' }, body: JSON.stringify(json) });
        return { status: res.status, body: (await res.json()) as Json };
      };
      expect((await asTest(`/v1/tasks/${other.body.id}/estimate`, { effort: 5 })).status).to.equal(404);
      expect((await call(`/v1/tasks/${other.body.id}`)).body.effort).to.equal(45);
      const testTask = await asTest('/v1/tasks', { title: 'Try it', effort: 1 });
      expect(testTask.body.livemode).to.equal(false);
      const testEstimated = await asTest(`/v1/tasks/${testTask.body.id}/estimate`, { effort: 2 });
      expect(testEstimated.body).to.include({ effort: 2, livemode: false });
      expect((await call(`/v1/tasks/${testTask.body.id}/estimate`, 'POST', { effort: 3 })).status).to.equal(404);
    });
  });

  it('adds a new field\'s column (NOT NULL with its default for the rows there), and rollback takes it away again', async () => {
    const source = fs.readFileSync(path.join(plugins, 'tasks.ts'), 'utf8');
    fs.writeFileSync(path.join(plugins, 'tasks.ts'), withFields(source, "    priority: states(['low', 'high'], 'low', 'How urgent.'),\n    notes: text(500),"));
    const { file, text } = await madeSaying('add to tasks: column priority, column notes');
    expect(text).to.contain("t.string('priority', 16).notNullable().defaultTo('low');");
    expect(text).to.contain("t.text('notes', 'text').nullable();");
    expect(text).to.contain("t.dropColumn('priority');");
    const migrated = await run('src/cli/migrate.ts', [], env);
    expect(migrated.stdout).to.contain(`applied ${file.replace(/\.ts$/, '')}`);
    const rolled = await run('src/cli/migrate.ts', ['rollback'], env);
    expect(rolled.stdout).to.contain(`rolled back ${file.replace(/\.ts$/, '')}`);
    // Without the file (the server would apply it again at start), the column is gone and boot says so.
    fs.rmSync(path.join(migrations, file));
    const server = await run('src/server.ts', [], { ...env, PORT: '0' });
    expect(server.code).to.equal(1);
    expect(server.stderr).to.match(/table "tasks" has no column "priority" \(a states field\): run `npm run migrate:make`/);
  });

  it('indexes an email filter as it compares (PostgreSQL, SQLite: lower(column); MySQL: the column under a caseless collation), and the filter finds any case through that index', async () => {
    const source = withFields(fs.readFileSync(FIXTURE, 'utf8'), "    contact: email({ description: 'Who to write to.' }),")
      .replace('import { boolean, datetime,', 'import { boolean, datetime, email,')
      .replace("list: { filters: ['status', 'client_id', 'done'] }", "list: { filters: ['status', 'client_id', 'done', 'contact'] }");
    expect(source).to.contain("'contact'] },");
    fs.writeFileSync(path.join(plugins, 'tasks.ts'), source);
    const { text } = await madeSaying('add to tasks: column contact, index tasks_ws_contact');
    expect(text).to.contain("caseless(t.string('contact', 254)).nullable();");
    expect(text).to.contain("t.index(['workspace_id', lower('contact'), 'created_at', 'id'], 'tasks_ws_contact');");
    expect(text).to.contain("column.collate('utf8mb4_general_ci')");
    const migrated = await run('src/cli/migrate.ts', [], env);
    expect(migrated.code, migrated.stderr).to.equal(0);

    const db = createDb(loadConfig({ ...backend().env, ...database.env }).database);
    try {
      const dialect = dialectOf(db);
      // The index as the database has it.
      if (dialect === 'sqlite') {
        const [index] = (await db.raw("SELECT sql FROM sqlite_master WHERE name = 'tasks_ws_contact'")) as Array<{ sql: string }>;
        expect(index?.sql).to.contain('lower(`contact`)');
      } else if (dialect === 'postgres') {
        const { rows } = (await db.raw("SELECT indexdef FROM pg_indexes WHERE indexname = 'tasks_ws_contact'")) as { rows: Array<{ indexdef: string }> };
        expect(rows[0]?.indexdef).to.contain('lower((contact)::text)');
      } else {
        const [columns] = (await db.raw("SELECT collation_name FROM information_schema.columns WHERE table_schema = database() AND table_name = 'tasks' AND column_name = 'contact'")) as [Array<{ collation_name: string }>];
        expect(columns[0]?.collation_name).to.equal(CASELESS_COLLATION);
      }
      // The filter's own condition (kernel/query/list.ts), as a page asks it: planned on that index.
      const page = db('tasks').where('workspace_id', 'ws_1').orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(51).select('id');
      among(page, kinds.email(), 'contact', ['Ada@Example.com']);
      const { sql, bindings } = page.toSQL();
      if (dialect === 'sqlite') {
        const plan = (await db.raw(`EXPLAIN QUERY PLAN ${sql}`, bindings)) as Array<{ detail: string }>;
        const steps = plan.map((step) => step.detail).join('\n');
        expect(steps, steps).to.match(/USING (COVERING )?INDEX tasks_ws_contact \(workspace_id=\? AND <expr>=\?\)/);
      } else if (dialect === 'postgres') {
        const plan = await db.transaction(async (trx) => {
          // A few rows would be read whole; the question is whether the index can serve.
          await trx.raw('SET LOCAL enable_seqscan = off');
          return ((await trx.raw(`EXPLAIN ${sql}`, bindings)) as { rows: Array<{ 'QUERY PLAN': string }> }).rows.map((r) => r['QUERY PLAN']).join('\n');
        });
        // The email is a condition of the index's own, not a filter on the rows it finds.
        expect(plan, plan).to.match(/Index (Only )?Scan (Backward )?using tasks_ws_contact[^]*Index Cond: .*lower\(\(contact\)::text\) = /);
      } else {
        // On that index (as few rows would be read whole), both of its first columns compared to the values.
        const [plan] = (await db.raw(`EXPLAIN ${sql.replace('from `tasks`', 'from `tasks` force index (`tasks_ws_contact`)')}`, bindings)) as [Array<{ key: string | null; ref: string | null }>];
        expect(plan[0]).to.include({ key: 'tasks_ws_contact', ref: 'const,const' });
      }
    } finally {
      await db.destroy();
    }

    await serving(async ({ call }) => {
      const ada = await call('/v1/tasks', 'POST', { title: 'Write to Ada', contact: 'Ada@Example.com' });
      expect(ada.status, JSON.stringify(ada.body)).to.equal(201);
      const grace = await call('/v1/tasks', 'POST', { title: 'Write to Grace', contact: 'grace@example.com' });
      await call('/v1/tasks', 'POST', { title: 'Write to nobody' });
      const found = await call('/v1/tasks?contact=ADA@example.COM');
      expect(found.body.data.map((t: Json) => [t.id, t.contact])).to.deep.equal([[ada.body.id, 'Ada@Example.com']]);
      const both = await call('/v1/tasks?contact[in]=ada@example.com,GRACE@EXAMPLE.COM');
      expect(both.body.data.map((t: Json) => t.id)).to.deep.equal([grace.body.id, ada.body.id]);
      expect((await call('/v1/tasks?contact=ada@example.org')).body.data).to.deep.equal([]);
    });
  });

  it('names a NOT NULL column a create would fail on (a required field made optional, or removed: a 500 each), at boot and in migrate:make; the fix it names lets writes through', async () => {
    const badge = (fields: string) =>
      `import { defineResource, integer, text } from 'workspace-api/plugin';\nexport default defineResource({ name: 'badge', path: '/badges', table: 'badges', idPrefix: 'badge_', description: 'A badge.', fields: { ${fields} } });\n`;
    fs.writeFileSync(path.join(plugins, 'badges.ts'), badge("label: text(50, { required: true })"));
    await madeSaying('create table badges');
    expect((await run('src/cli/migrate.ts', [], env)).code).to.equal(0);
    await serving(async ({ call }) => {
      expect((await call('/v1/badges', 'POST', { label: 'Silver' })).status).to.equal(201);
    }, 'read:badges,write:badges');
    // The field no longer required: its column is still NOT NULL.
    fs.writeFileSync(path.join(plugins, 'badges.ts'), badge("label: text(50, { required: false })"));
    const optional = /table "badges" column "label" is NOT NULL without a default, but its field may be null \(no longer required\?\): every create without it would fail on it\. In a migration of your own, make it nullable \(t\.setNullable\('label'\)\)/;
    const unchanged = await make();
    expect(unchanged.code).to.equal(1);
    expect(unchanged.stdout).to.contain('nothing to do');
    expect(unchanged.stderr).to.match(optional);
    const refused = await run('src/server.ts', [], { ...env, PORT: '0' });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(optional);

    // Renamed in the declaration: migrate:make cannot tell a rename from a removal and an addition. It writes nothing for the field and says what to run.
    fs.writeFileSync(path.join(plugins, 'badges.ts'), badge("name: text(50, { required: true })"));
    const ambiguous = await make();
    expect(ambiguous.code).to.equal(1);
    expect(ambiguous.stdout).to.contain('nothing to do');
    expect(ambiguous.stderr.trim()).to.equal(
      `${path.relative(ROOT_DIR, path.join(plugins, 'badges.ts'))}: table "badges" has no column for field "name", and "label" no field declares: was "label" renamed "name", or removed and "name" added? migrate:make cannot tell, and wrote nothing for "name". Renamed: run \`npm run migrate:make -- --rename badges.label:name\`. Removed: drop it in a migration of your own (t.dropColumn('label')), then run migrate:make again.`,
    );
    const before = written();
    for (const args of [['--rename', 'badges.nope:name'], ['--rename', 'badges.label:title'], ['--rename', 'label:name'], ['--rename', 'invoices.label:name']]) {
      const wrong = await make(args);
      expect(wrong.code, args.join(' ')).to.be.oneOf([1, 2]);
      expect(wrong.stderr, args.join(' ')).to.match(/^--rename /);
    }
    expect(written()).to.deep.equal(before);
    // As it says: the column renamed, its rows' values kept.
    const renamed = await make(['--rename', 'badges.label:name']);
    expect(renamed.code, renamed.stderr).to.equal(0);
    expect(renamed.stdout).to.contain('add to badges: column label renamed name');
    const file = written().at(-1)!;
    expect(fs.readFileSync(path.join(migrations, file), 'utf8')).to.contain("t.renameColumn('label', 'name');");
    expect((await run('src/cli/migrate.ts', [], env)).code).to.equal(0);
    const db = createDb(loadConfig({ ...backend().env, ...env }).database);
    expect(await db('badges').pluck('name').finally(() => db.destroy())).to.deep.equal(['Silver']);
    await serving(async ({ call }) => {
      expect((await call('/v1/badges', 'POST', { name: 'Gold' })).status).to.equal(201);
    }, 'read:badges,write:badges');

    // Removed, and a field another column could not have held added: migrate:make adds it and names the old column every create would fail on.
    fs.writeFileSync(path.join(plugins, 'badges.ts'), badge('rank: integer({ min: 0, max: 10 })'));
    const made = await make();
    expect(made.code, made.stderr).to.equal(1);
    expect(made.stdout).to.contain('add to badges: column rank');
    const stray = /table "badges" column "name" is NOT NULL without a default, and no field declares it \(a field renamed or removed\?\): every create would fail on it\. In a migration of your own, rename it .*t\.setNullable\('name'\).*t\.dropColumn\('name'\)/;
    expect(made.stderr).to.match(stray);
    const server = await run('src/server.ts', [], { ...env, PORT: '0' });
    expect(server.code).to.equal(1);
    expect(server.stderr).to.match(stray);
    // What the message says to write, as the author would (one of the three), on this backend.
    fs.writeFileSync(path.join(migrations, '99991231000000_badges_name.ts'), "import type { Knex } from 'knex';\nexport const up = (knex: Knex) => knex.schema.alterTable('badges', (t) => { t.setNullable('name'); });\nexport const down = (knex: Knex) => knex.schema.alterTable('badges', (t) => { t.dropNullable('name'); });\n");
    await serving(async ({ call }) => {
      const created = await call('/v1/badges', 'POST', { rank: 3 });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect((await call(`/v1/badges/${created.body.id}`)).body.rank).to.equal(3);
    }, 'read:badges,write:badges');
  });

  it('holds what an action returns to what a PATCH takes: another field or a kernel one is a 422 naming it, where it went unsaid; anything but an object or nothing is a 500 naming the action', async () => {
    fs.writeFileSync(
      path.join(plugins, 'stamps.ts'),
      `import { defineResource, text } from 'workspace-api/plugin';
export default defineResource({
  name: 'stamp', path: '/stamps', table: 'stamps', idPrefix: 'stamp_', description: 'A stamp.',
  fields: { label: text(50, { required: true }) },
  actions: {
    whole: { summary: 'Returns the object update() gave', handle: ({ update }) => update({ label: 'whole' }) },
    nosuch: { summary: 'Changes a field it does not have', handle: () => ({ lable: 'typo' }) },
    rekey: { summary: 'Changes the id', handle: ({ object }) => ({ ...object, id: 'stamp_other' }) },
    text: { summary: 'Returns a string', handle: () => 'done' as never },
  },
});
`,
    );
    await madeSaying('create table stamps');
    await serving(async ({ call, output }) => {
      const stamp = await call('/v1/stamps', 'POST', { label: 'first' });
      expect(stamp.status, JSON.stringify(stamp.body)).to.equal(201);
      const whole = await call(`/v1/stamps/${stamp.body.id}/whole`, 'POST', {});
      expect(whole.status, JSON.stringify(whole.body)).to.equal(200);
      expect(whole.body).to.include({ label: 'whole', version: 2 });
      const typo = await call(`/v1/stamps/${stamp.body.id}/nosuch`, 'POST', {});
      expect(typo.status).to.equal(422);
      expect(typo.body.errors).to.deep.equal([{ pointer: '/lable', message: 'is not a field this body takes; it takes label' }]);
      const rekey = await call(`/v1/stamps/${stamp.body.id}/rekey`, 'POST', {});
      expect(rekey.status).to.equal(422);
      expect(rekey.body.errors.map((e: Json) => e.pointer)).to.deep.equal(['/id']);
      const text = await call(`/v1/stamps/${stamp.body.id}/text`, 'POST', {});
      expect(text.status).to.equal(500);
      await waitFor(() => output().includes('stamp action text returned \\"done\\", not the changes to apply (an object) or nothing'), 5000, 'the log line naming the action');
      // Nothing was written by the refused ones.
      expect((await call(`/v1/stamps/${stamp.body.id}`)).body).to.include({ label: 'whole', version: 2 });
    }, 'read:stamps,write:stamps');
  });
});
