import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import knex from 'knex';
import { ROOT_DIR } from '../../src/common/config.js';
import { backend, isolatedDatabase } from '../helpers/backend.js';
import { outcomeOf, run, type RunResult } from '../helpers/processes.js';

/**
 * An entry point started as its own process, sent SIGTERM once it printed `mark` on stderr
 * (what a test plugin or migration prints when it begins), and its outcome.
 */
async function signalledAt(script: string, mark: string, env: Record<string, string>): Promise<RunResult & { signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT_DIR, script)], {
    cwd: ROOT_DIR,
    env: { PATH: process.env.PATH ?? '', ...backend().env, PORT: '0', LOG_LEVEL: 'info', WORKER: 'off', DEMO: 'false', ...env },
  });
  let signal: NodeJS.Signals | null = null;
  child.on('exit', (_code, s) => (signal = s));
  let seen = '';
  child.stderr.on('data', (d: Buffer) => {
    seen += d.toString();
    if (seen.includes(mark) && child.exitCode === null) child.kill('SIGTERM');
  });
  const outcome = await outcomeOf(child);
  return { ...outcome, signal };
}

/** A knex of the test's own on a DATABASE_URL. */
const connect = (url: string) =>
  url.startsWith('sqlite:')
    ? knex({ client: 'better-sqlite3', connection: { filename: url.slice('sqlite:'.length) }, useNullAsDefault: true })
    : knex({ client: url.startsWith('postgres') ? 'pg' : 'mysql2', connection: url });

function tempDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-signals-'));
  for (const [name, body] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), body);
  return dir;
}

// A plugin that takes 60 s to load: the process is signalled while it loads its plugins.
const SLOW_PLUGIN = `
import { defineResource } from ${JSON.stringify(path.join(ROOT_DIR, 'src/kernel/define.js'))};
process.stderr.write('plugin loading\\n');
await new Promise((r) => setTimeout(r, 60_000));
export default defineResource({
  name: 'note', path: '/notes', table: 'notes', idPrefix: 'note_', description: 'A note.',
  scopes: { read: 'read:notes', write: 'write:notes' },
  fields: { body: { type: 'string', maxLength: 1000 } }, required: ['body'],
  list: { sorts: ['created_at'], filters: [] },
});`;

// A migration that takes 2 s: a signal during it must not cut it short.
const SLOW_MIGRATION = `
export async function up(knex) {
  process.stderr.write('migration running\\n');
  await new Promise((r) => setTimeout(r, 2000));
  await knex.schema.createTable('signal_test_marker', (t) => { t.integer('id').primary(); });
}
export async function down(knex) {
  await knex.schema.dropTable('signal_test_marker');
}`;

describe('SIGTERM during start-up', () => {
  for (const script of ['src/worker.ts', 'src/server.ts']) {
    it(`${script} stops with 0 when signalled while it loads its plugins, at once`, async () => {
      const db = await isolatedDatabase(`sig_${script.includes('worker') ? 'w' : 's'}`);
      const plugins = tempDir({ 'notes.ts': SLOW_PLUGIN, 'package.json': '{ "type": "module" }' });
      try {
        const started = Date.now();
        const outcome = await signalledAt(script, 'plugin loading', { ...db.env, PLUGINS_DIR: plugins });
        expect(outcome.signal, outcome.stderr).to.equal(null);
        expect(outcome.code, outcome.stderr).to.equal(0);
        // It did not wait for the plugin's 60 s.
        expect(Date.now() - started).to.be.below(40_000);
      } finally {
        fs.rmSync(plugins, { recursive: true, force: true });
        await db.drop();
      }
    });
  }

  it('lets a migration in progress finish, then stops with 0: the migration is recorded and the lock released', async () => {
    const db = await isolatedDatabase('sig_m');
    const migrations = tempDir({ '29990101000000_signal_test.ts': SLOW_MIGRATION });
    try {
      const outcome = await signalledAt('src/worker.ts', 'migration running', { ...db.env, MIGRATIONS_DIR: migrations });
      expect(outcome.signal, outcome.stderr).to.equal(null);
      expect(outcome.code, outcome.stderr).to.equal(0);
      expect(outcome.stdout).to.contain('"msg":"stopped during start-up"');
      expect(outcome.stdout).not.to.contain('delivery worker started');
      const conn = connect(db.env.DATABASE_URL ?? '');
      try {
        const applied = (await conn('knex_migrations').pluck('name')) as string[];
        expect(applied).to.include('29990101000000_signal_test');
        expect(await conn.schema.hasTable('signal_test_marker')).to.equal(true);
        const lock = (await conn('knex_migrations_lock').first('is_locked')) as { is_locked: number };
        expect(Number(lock.is_locked)).to.equal(0);
      } finally {
        await conn.destroy();
      }
    } finally {
      fs.rmSync(migrations, { recursive: true, force: true });
      await db.drop();
    }
  });
});

describe('npm run migrate -- rollback', () => {
  const TYPO = `
export async function up(knex) { await knex.schema.createTable('typo_tabel', (t) => { t.integer('id').primary(); }); }
export async function down(knex) { await knex.schema.dropTable('typo_tabel'); }`;

  it('undoes the last batch applied (a migration with a typo), and refuses an unknown argument', async () => {
    const db = await isolatedDatabase('rollback');
    const migrations = tempDir({ '29990101000100_typo.ts': TYPO });
    try {
      const env = { ...db.env, MIGRATIONS_DIR: migrations };
      expect((await run('src/cli/migrate.ts', [], env)).code).to.equal(0);
      // The typo lands in a batch of its own, as it would when added after the others.
      fs.writeFileSync(path.join(migrations, '29990101000200_typo_again.ts'), TYPO.replace(/typo_tabel/g, 'typo_again'));
      const applied = await run('src/cli/migrate.ts', [], env);
      expect(applied.stdout.trim()).to.equal('applied 29990101000200_typo_again');
      const undone = await run('src/cli/migrate.ts', ['rollback'], env);
      expect(undone.code, undone.stderr).to.equal(0);
      expect(undone.stdout.trim()).to.equal('rolled back 29990101000200_typo_again');
      const conn = connect(db.env.DATABASE_URL ?? '');
      try {
        expect(await conn.schema.hasTable('typo_again')).to.equal(false);
        expect(await conn.schema.hasTable('typo_tabel')).to.equal(true);
        expect(await conn('knex_migrations').where('name', '29990101000200_typo_again').first()).to.equal(undefined);
      } finally {
        await conn.destroy();
      }
      const wrong = await run('src/cli/migrate.ts', ['rolback'], env);
      expect(wrong.code).to.equal(2);
      expect(wrong.stderr).to.contain('npm run migrate -- rollback');
    } finally {
      fs.rmSync(migrations, { recursive: true, force: true });
      await db.drop();
    }
  });
});
