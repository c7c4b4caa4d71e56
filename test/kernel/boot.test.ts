import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR } from '../../src/common/config.js';
import { loadPlugins } from '../../src/boot.js';
import { loadRegistry } from '../../src/kernel/registry/registry.js';
import { backend, isolatedDatabase } from '../helpers/backend.js';
import { checkedFetcher } from '../helpers/contract.js';
import { outcomeOf, run, startServer } from '../helpers/processes.js';

const DEFINE = path.join(ROOT_DIR, 'src/kernel/define.js');

function pluginsDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-plugins-'));
  for (const [name, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), body);
  return dir;
}

const plugin = (overrides: string) => `
import { defineResource } from ${JSON.stringify(DEFINE)};
export default defineResource({
  name: 'note', path: '/notes', table: 'notes', idPrefix: 'note_', description: 'A note.',
  scopes: { read: 'read:notes', write: 'write:notes' },
  fields: { body: { type: 'string', maxLength: 1000 } }, required: ['body'],
  list: { sorts: ['created_at'], filters: [] },
  ${overrides}
});`;

describe('plugin discovery refuses a bad plugin at boot, naming the file', () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['a duplicate path', { 'a.ts': plugin(''), 'b.ts': plugin("name: 'memo', table: 'memos', idPrefix: 'memo_', scopes: { read: 'read:memos', write: 'write:memos' },") }, /b\.ts: path "\/notes" is already taken by .*a\.ts/],
    ['a path the service serves: /health', { 'a.ts': plugin("path: '/health',") }, /a\.ts: path "\/health" is already taken by the service's own \/v1\/health/],
    ['a path the service serves: /event-log', { 'a.ts': plugin("path: '/event-log',") }, /a\.ts: path "\/event-log" is already taken by the service's own \/v1\/event-log/],
    ['a path the service serves: /webhooks', { 'a.ts': plugin("path: '/webhooks',") }, /a\.ts: path "\/webhooks" is already taken by the service's own \/v1\/webhooks/],
    ['a path the service serves: /events', { 'a.ts': plugin("path: '/events',") }, /a\.ts: path "\/events" is already taken by the service's own \/v1\/events/],
    ['a malformed scope', { 'a.ts': plugin("scopes: { read: 'notes', write: 'write:notes' },") }, /a\.ts:3:16: .*scopes\.read "notes"/],
    ['an invalid JSON Schema', { 'a.ts': plugin("fields: { body: { type: 'text' } },") }, /a\.ts: invalid JSON Schema/],
    ['an unknown schema keyword', { 'a.ts': plugin("fields: { body: { type: 'string', maxLenght: 3 } },") }, /a\.ts: invalid JSON Schema.*maxLenght/],
    ['a reference to no resource', { 'a.ts': plugin("fields: { body: { type: 'string' }, deal_id: { type: ['string', 'null'] } }, references: { deal_id: 'deal' },") }, /a\.ts: reference "deal_id" names unknown resource "deal"/],
    // Declarations no write could satisfy: they loaded, and failed only at the first create.
    ['a default that is not one of its states', { 'a.ts': plugin("fields: { body: { type: 'string', maxLength: 1000 }, status: { type: 'string', enum: ['open', 'closed'], default: 'opne' } },") }, /a\.ts: field "status": its default "opne" is not a value it takes \(the default must be equal to one of the allowed values\)/],
    ['an action field whose default its type refuses', { 'a.ts': plugin("actions: { pin: { summary: 'Pin it', body: { on: { type: 'boolean', default: 'yes' } }, handle: () => ({}) } },") }, /a\.ts: action "pin" field "on": its default "yes" is not a value it takes \(the default must be boolean\)/],
    ['an integer whose minimum is above its maximum', { 'a.ts': plugin("fields: { body: { type: 'string', maxLength: 1000 }, seats: { type: ['integer', 'null'], minimum: 10, maximum: 1 } },") }, /a\.ts:3:16: field "seats": its minimum 10 is above its maximum 1, so no value fits/],
    ['a text that holds no character', { 'a.ts': plugin("fields: { body: { type: 'string', maxLength: 0 } },") }, /a\.ts:3:16: field "body": its maxLength 0 holds no text; give it 1 or more/],
    ['a text whose minLength is above its maxLength', { 'a.ts': plugin("fields: { body: { type: 'string', minLength: 20, maxLength: 10 } },") }, /a\.ts:3:16: field "body": its minLength 20 is above its maxLength 10, so no text fits/],
    ['a default export that is not a plugin', { 'a.ts': 'export default { name: "x" };' }, /a\.ts: the default export must come from defineResource/],
    // A key the kernel does not know was accepted without a word (a misspelt hook never ran): named, with the nearest known one and the line.
    ['a misspelt hook', { 'a.ts': plugin('validat: () => [],') }, /a\.ts:3:16: "validat" is not a key it knows: did you mean "validate"\?$/],
    ['a misspelt key of an event', { 'a.ts': plugin("events: { shipped: { when: () => true, descripton: 'Shipped.' } },") }, /a\.ts:3:16: event "shipped": "descripton" is not a key it knows: did you mean "description"\?$/],
    ['a misspelt key of an action', { 'a.ts': plugin("actions: { pin: { summary: 'Pin it', handler: () => ({}) } },") }, /a\.ts:3:16: action "pin": "handler" is not a key it knows: did you mean "handle"\?$/],
    ['a key like none it knows', { 'a.ts': plugin("colour: 'red',") }, /a\.ts:3:16: "colour" is not a key it knows: it knows "name", "path", .* and "changes"$/],
    // API versions (docs/reference.md section 19): a change that cannot hold stops boot naming the plugin.
    ['a misspelt key of a version change', { 'a.ts': plugin("changes: [{ version: '2027-01-15', description: 'Renamed.', renam: { text: 'body' } }],") }, /a\.ts:3:16: change 1 \(2027-01-15\): "renam" is not a key it knows: did you mean "rename"\?$/],
    ['a version change of a date not written YYYY-MM-DD', { 'a.ts': plugin("changes: [{ version: '2027-1-15', description: 'Renamed.', rename: { text: 'body' } }],") }, /a\.ts:3:16: change 1: version "2027-1-15" must be a date written YYYY-MM-DD$/],
    ['a rename of a field that does not exist', { 'a.ts': plugin("changes: [{ version: '2027-01-15', description: 'Renamed.', rename: { text: 'content' } }],") }, /a\.ts:3:16: change of 2027-01-15 renames "text" to "content", which is not a field at that version$/],
    ['a misspelt option of a field helper', { 'a.ts': `import { text } from ${JSON.stringify(path.join(ROOT_DIR, 'src/kernel/fields.js'))};\n${plugin('').replace("fields: { body: { type: 'string', maxLength: 1000 } }", 'fields: { body: text(200, { requird: true }) }')}` }, /a\.ts:7:\d+: text\(200\): "requird" is not an option it knows: did you mean "required"\?$/],
    ['a name the file does not define', { 'a.ts': plugin('description: txt,') }, /a\.ts:8:\d+: txt is not defined$/],
  ];
  for (const [what, files, message] of cases) {
    it(`refuses ${what}`, async () => {
      const dir = pluginsDir(files);
      try {
        let error: Error | undefined;
        await loadPlugins(dir).catch((err: Error) => (error = err));
        expect(error?.message).to.match(message);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it('stops `npm start` and the page build before it with one line each: no stack trace of the build, no npm error blob', async () => {
    const dir = pluginsDir({ 'broken.ts': plugin('validat: () => [],') });
    try {
      const env = { ...process.env, ...backend().env, PLUGINS_DIR: dir, PORT: '0' };
      for (const args of [['start'], ['run', 'build:web', '--', '--force']]) {
        const res = await outcomeOf(spawn('npm', args, { cwd: ROOT_DIR, env }));
        expect(res.code, args.join(' ')).to.equal(1);
        // Beside npm's banner (`> workspace-api@... start`) and, when the page was built before, its note that it is up to date.
        const said = `${res.stdout}${res.stderr}`.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('> ') && !line.startsWith('Developer page up to date'));
        expect(said, args.join(' ')).to.deep.equal([`Plugin error: plugin ${path.join(dir, 'broken.ts')}:3:16: "validat" is not a key it knows: did you mean "validate"?`]);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops `npm start` with exit 1 and the file in the message', async () => {
    const dir = pluginsDir({ 'broken.ts': plugin("idPrefix: 'Note-',") });
    try {
      const res = await run('src/server.ts', [], { PLUGINS_DIR: dir, PORT: '0' });
      expect(res.code).to.equal(1);
      expect(res.stderr).to.match(/Plugin error: plugin .*broken\.ts:3:16: idPrefix "Note-"/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a plugin says each thing once', () => {
  it('derives scopes from the path, required fields from the fields, and references, their patterns and filters from ref()', async () => {
    const FIELDS = JSON.stringify(path.join(ROOT_DIR, 'src/kernel/fields.js'));
    const dir = pluginsDir({
      'a.ts': `import { defineResource } from ${JSON.stringify(DEFINE)};
import { ref, text } from ${FIELDS};
export default defineResource({ name: 'price_list', path: '/price-lists', table: 'price_lists', idPrefix: 'pl_', description: 'Prices.',
  fields: { title: text(100, { required: true }), owner_id: ref('owner', 'Who owns it.'), stage: { type: 'string', enum: ['a', 'b'], default: 'a' } },
  state: { field: 'stage', transitions: 'free' } });`,
      'b.ts': `import { defineResource } from ${JSON.stringify(DEFINE)};
import { text } from ${FIELDS};
export default defineResource({ name: 'owner', path: '/owners', table: 'owners', idPrefix: 'own_', description: 'Owners.', fields: { name: text(100, { required: true }) } });`,
      'c.ts': `import { defineResource } from ${JSON.stringify(DEFINE)};
import { ref } from ${FIELDS};
export default defineResource({ name: 'stray', path: '/strays', table: 'strays', idPrefix: 'st_', description: 'Strays.', fields: { thing_id: ref('thing', 'Nothing.') } });`,
    });
    try {
      let error: Error | undefined;
      await loadRegistry(dir).catch((err: Error) => (error = err));
      expect(error?.message).to.match(/c\.ts: reference "thing_id" names unknown resource "thing"/);
      fs.rmSync(path.join(dir, 'c.ts'));
      const registry = await loadRegistry(dir);
      const def = registry.byName.get('price_list')?.def;
      expect(def?.scopes).to.deep.equal({ read: 'read:price_lists', write: 'write:price_lists' });
      expect(def?.required).to.deep.equal(['title']);
      expect(def?.references).to.deep.equal({ owner_id: 'owner' });
      expect(def?.list).to.deep.equal({ sorts: ['created_at', 'updated_at'], filters: ['stage', 'owner_id'] });
      expect(def?.fields.owner_id).to.include({ pattern: '^own_[0-9a-z]+$' });
      expect(registry.byName.get('price_list')?.createBodySchema.required).to.deep.equal(['title']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `npm start` on a database of its own, with one plugin and one migration of the test's: what it says as it stops. */
async function startWith(name: string, pluginText: string, migrationText: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const storage = await isolatedDatabase(name);
  const plugins = pluginsDir({ 'notes.ts': pluginText });
  const migrations = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-migrations-'));
  fs.writeFileSync(path.join(migrations, '20261201000000_notes.ts'), migrationText);
  try {
    return await run('src/server.ts', [], { ...storage.env, PLUGINS_DIR: plugins, MIGRATIONS_DIR: migrations, PORT: '0' });
  } finally {
    fs.rmSync(plugins, { recursive: true, force: true });
    fs.rmSync(migrations, { recursive: true, force: true });
    await storage.drop();
  }
}

describe("a plugin's table is checked at start-up, after migrations", () => {
  it('stops `npm start` naming the plugin, the table and the missing column', async () => {
    const res = await startWith(
      'columns',
      plugin("fields: { body: { type: 'string', maxLength: 1000 }, colour: { type: ['string', 'null'] } },"),
      `import { createResourceTable } from ${JSON.stringify(path.join(ROOT_DIR, 'src/db/tables.js'))};
export async function up(knex) { await createResourceTable(knex, 'notes', { filters: [] }, (t) => { t.text('body'); }); }
export async function down(knex) { await knex.schema.dropTable('notes'); }`,
    );
    expect(res.code, res.stdout).to.equal(1);
    expect(res.stderr).to.match(/Plugin error: plugin .*notes\.ts: table "notes" has no column "colour" \(a text field\): run `npm run migrate:make` to write the migration that adds it/);
    expect(res.stderr).not.to.match(/\n\s+at /);
  });

  it('stops `npm start` naming a column whose kind does not fit its field, and what the field needs', async () => {
    const res = await startWith(
      'kinds',
      plugin("fields: { body: { type: 'string', maxLength: 1000 }, due_at: { type: ['string', 'null'], format: 'date-time' }, code: { type: ['string', 'null'], maxLength: 20 } },"),
      `import { createResourceTable } from ${JSON.stringify(path.join(ROOT_DIR, 'src/db/tables.js'))};
export async function up(knex) { await createResourceTable(knex, 'notes', { filters: [] }, (t) => { t.text('body'); t.string('due_at', 30); t.string('code', 20); }); }
export async function down(knex) { await knex.schema.dropTable('notes'); }`,
    );
    expect(res.code, res.stdout).to.equal(1);
    expect(res.stderr).to.match(/Plugin error: plugin .*notes\.ts: table "notes" column "due_at" is varchar\(30\), but its field needs bigInteger \(a datetime column\): change it in a migration of your own/);
  });
});

describe('every entry point says a bad setting in one line, without a stack trace', () => {
  for (const [script, args] of [
    ['src/cli/migrate.ts', []],
    ['src/cli/admin.ts', ['key', 'list', '--workspace', 'ws_x']],
    ['src/cli/openapi.ts', []],
    ['src/worker.ts', []],
    ['src/server.ts', []],
  ] as const) {
    it(`${script}`, async () => {
      const res = await run(script, [...args], { PORT: 'eighty' });
      expect(res.code).to.equal(1);
      expect(res.stderr.trim()).to.equal('Configuration error: PORT: must be an integer, got "eighty"');
    });
  }
});

describe("a plugin's keyset index is checked at start-up too", () => {
  it('stops `npm start` naming the plugin, the table and the missing index', async () => {
    // The columns, but not the index createResourceTable() would have made.
    const res = await startWith(
      'indexes',
      plugin(''),
      `export async function up(knex) { await knex.schema.createTable('notes', (t) => { t.string('id', 64).primary(); t.string('workspace_id', 64); t.text('body'); t.bigInteger('created_at'); t.bigInteger('updated_at'); t.integer('version'); }); }
export async function down(knex) { await knex.schema.dropTable('notes'); }`,
    );
    expect(res.code, res.stdout).to.equal(1);
    expect(res.stderr).to.match(/Plugin error: plugin .*notes\.ts: table "notes" has no index "notes_ws_created" on \(workspace_id, created_at, id\)/);
  });
});

describe('a bad setting stops start-up, naming it', () => {
  for (const [env, message] of [
    [{ PORT: 'eighty' }, /PORT: must be an integer/],
    [{ DATABASE_URL: 'mongodb://x/y' }, /DATABASE_URL: unsupported scheme "mongodb:" \(expected sqlite:, mysql: or postgres:\)/],
    [{ DATABASE_URL: 'postgres://127.0.0.1:5432' }, /DATABASE_URL: a postgres URL must name a database/],
    [{ REDIS_URL: 'http://localhost' }, /REDIS_URL: unsupported scheme/],
    [{ DATABASE_URL: 'mysql://root:50%off@127.0.0.1:3306/test' }, /^Configuration error: DATABASE_URL: its password is not percent-encoded UTF-8: write a % in it as %25/],
    [{ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/te%E0st' }, /DATABASE_URL: its path is not percent-encoded UTF-8/],
    [{ REDIS_URL: 'redis://:50%off@127.0.0.1:6379' }, /REDIS_URL: its password is not percent-encoded UTF-8/],
    [{ REDIS_URL: 'redis-cluster://u:50%off@10.0.0.1:7000' }, /REDIS_URL: its password is not percent-encoded UTF-8/],
    [{ REDIS_URL: 'redis-cluster://10.0.0.1,10.0.0.2:7000' }, /REDIS_URL: a cluster URL lists nodes as host:port/],
    [{ WORKER: 'sometimes' }, /WORKER: must be one of inline, off/],
    [{ WEBHOOK_ALLOW_PRIVATE: 'yes' }, /WEBHOOK_ALLOW_PRIVATE: must be true or false/],
    [{ WEBHOOK_RETRY_DELAYS: '5,soon' }, /WEBHOOK_RETRY_DELAYS: must be a comma-separated list of seconds/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)}`, async () => {
      const res = await run('src/server.ts', [], env);
      expect(res.code).to.equal(1);
      expect(res.stderr).to.match(message);
    });
  }
  for (const [env, message] of [
    [{ WEBHOOK_LEASE_SECONDS: '5' }, /WEBHOOK_LEASE_SECONDS: must be at least twice WEBHOOK_TIMEOUT_SECONDS \(20\)/],
    [{ WEBHOOK_DNS_SERVERS: 'dns.google' }, /WEBHOOK_DNS_SERVERS: must be a comma-separated list of IP addresses/],
  ] as const) {
    it(`refuses ${JSON.stringify(env)} in the worker too`, async () => {
      const res = await run('src/worker.ts', [], env);
      expect(res.code).to.equal(1);
      expect(res.stderr).to.match(message);
    });
  }
});

describe('stopping the server', () => {
  it('closes its connections and exits 0 on SIGTERM', async () => {
    const server = await startServer();
    expect((await (await checkedFetcher(server.url))('/v1/health')).status).to.equal(401);
    const code = await server.stop('SIGTERM');
    expect(code).to.equal(0);
    expect(server.output()).to.contain('"msg":"draining in-flight requests"');
    expect(server.output()).to.contain('"msg":"stopped"');
  });
});
