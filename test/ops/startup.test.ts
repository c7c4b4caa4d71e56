import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knex, { type Knex } from 'knex';
import { serverAdmin, type ServerAdmin } from '../../src/db/create.js';
import { backend } from '../helpers/backend.js';
import { spawn } from 'node:child_process';
import { ROOT_DIR } from '../../src/common/config.js';
import { waitFor } from '../helpers/app.js';
import { run, startServer } from '../helpers/processes.js';

const KEY = /wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}/;

describe('start-up: the demo workspace and a server database that does not exist', function () {
  this.timeout(60_000);

  it('makes no demo on the embedded default with DEMO=false', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-nodemo-'));
    const server = await startServer({ DATABASE_URL: `sqlite:${path.join(dir, 'fresh.db')}`, DEMO: 'false' });
    try {
      expect(server.output()).not.to.match(KEY);
    } finally {
      expect(await server.stop()).to.equal(0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops the server when `npm start` gets SIGTERM: it drains, logs "stopped" and is gone', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-npmstart-'));
    const npm = spawn('npm', ['start'], { cwd: ROOT_DIR, env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), ...backend().env, DATABASE_URL: `sqlite:${path.join(dir, 'a.db')}`, PORT: '0', DEMO: 'false', LOG_LEVEL: 'info' } });
    let out = '';
    npm.stdout.on('data', (d: Buffer) => (out += d));
    npm.stderr.on('data', (d: Buffer) => (out += d));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /"msg":"listening"/.test(out), 45_000, 'npm start to listen');
      const pid = Number(/"pid":(\d+)[^\n]*"msg":"listening"/.exec(out)?.[1]);
      expect(pid).to.be.greaterThan(0).and.not.equal(npm.pid);
      npm.kill('SIGTERM');
      await exited;
      await waitFor(() => /"msg":"stopped"/.test(out), 10_000, 'the server to stop');
      const alive = () => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      await waitFor(() => !alive(), 5_000, 'the server process to be gone');
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('on the database server (MariaDB or PostgreSQL)', () => {
    let server: ServerAdmin | undefined;
    let admin: Knex;
    let base: URL;
    let postgres = false;
    const made: string[] = [];
    before(function () {
      if (backend().kind === 'embedded') this.skip();
      base = new URL(backend().env.DATABASE_URL!);
      postgres = backend().kind === 'postgres';
      server = serverAdmin(base.href);
      admin = server.knex;
    });
    after(async () => {
      if (!server) return;
      for (const name of made) await server.drop(name);
      await admin.raw(postgres ? 'DROP ROLE IF EXISTS wsapi_limited' : "DROP USER IF EXISTS 'wsapi_limited'@'%'");
      await server.destroy();
    });

    /** DATABASE_URL naming a database of this run that does not exist yet. */
    const missing = (suffix: string, user?: { name: string; password: string }) => {
      const url = new URL(base.href);
      url.pathname = `${base.pathname}_${suffix}`;
      if (user) {
        url.username = user.name;
        url.password = user.password;
      }
      made.push(url.pathname.slice(1));
      return url.href;
    };
    const exists = async (name: string) =>
      postgres ? ((await admin.raw('SELECT 1 FROM pg_database WHERE datname = ?', [name])) as { rows: unknown[] }).rows.length === 1 : ((await admin.raw('SHOW DATABASES LIKE ?', [name])) as [unknown[]])[0].length === 1;

    it('creates the database when the user may, migrates it, and makes no demo there', async () => {
      const url = missing('created');
      const name = new URL(url).pathname.slice(1);
      expect(await exists(name)).to.equal(false);
      const server = await startServer({ DATABASE_URL: url });
      try {
        expect(await exists(name)).to.equal(true);
        expect(server.stdout()).to.contain('"msg":"created the database"');
        // One line says it: no "Unknown database" warning, no stack trace before it.
        expect(server.output()).not.to.match(/Unknown database|does not exist|\n\s+at /);
        expect(server.output()).not.to.match(KEY);
        expect((await fetch(`${server.url}/readyz`)).status).to.equal(200);
      } finally {
        expect(await server.stop()).to.equal(0);
      }
    });

    it('makes the demo on the database server with DEMO=true, its key on stderr and never in the JSON log stream', async () => {
      const server = await startServer({ DATABASE_URL: missing('demo'), DEMO: 'true' });
      try {
        await waitFor(() => KEY.test(server.output()), 10_000, 'the demo key on stderr');
        expect(server.stdout()).not.to.match(KEY);
      } finally {
        await server.stop();
      }
    });

    /** A user of the server with no right of its own (`wsapi_limited`, dropped after the tests), and DATABASE_URL naming `suffix`'s database as that user. */
    const limited = async (suffix: string) => {
      if (postgres) {
        await admin.raw('DROP ROLE IF EXISTS wsapi_limited');
        await admin.raw("CREATE ROLE wsapi_limited LOGIN PASSWORD 'limited-pass'");
      } else await admin.raw("CREATE USER IF NOT EXISTS 'wsapi_limited'@'%' IDENTIFIED BY 'limited-pass'");
      return missing(suffix, { name: 'wsapi_limited', password: 'limited-pass' });
    };

    it('says exactly what to run when the user may not create it, in one line, and exits 1', async () => {
      const url = await limited('denied');
      const name = new URL(url).pathname.slice(1);
      const result = await run('src/server.ts', [], { DATABASE_URL: url, PORT: '0' });
      expect(result.code).to.equal(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines, result.stderr).to.have.length(1);
      expect(lines[0]).to.contain(`The database "${name}" (DATABASE_URL) does not exist or user "wsapi_limited" may not use it, and "wsapi_limited" may not create it`);
      expect(lines[0]).to.contain(
        postgres
          ? `Have an administrator run: CREATE DATABASE "${name}" ENCODING 'UTF8' TEMPLATE template0 OWNER "wsapi_limited";`
          : `Have an administrator run: CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4; GRANT ALL ON \`${name}\`.* TO 'wsapi_limited'@'%';`,
      );
      expect(await exists(name)).to.equal(false);
      const migrate = await run('src/cli/migrate.ts', [], { DATABASE_URL: url });
      expect(migrate.code).to.equal(1);
      expect(migrate.stderr).to.contain('Have an administrator run');
    });

    it('says what to run when the database exists but the user may not create tables there, in one line, and the line it gives works', async () => {
      const url = await limited('tables');
      const name = new URL(url).pathname.slice(1);
      // Made by an administrator: on PostgreSQL 15 its public schema then grants CREATE to its
      // owner alone; on MySQL the user may read it and no more.
      await server!.create(name);
      if (!postgres) await admin.raw("GRANT SELECT ON ??.* TO 'wsapi_limited'@'%'", [name]);
      const result = await run('src/server.ts', [], { DATABASE_URL: url, PORT: '0' });
      expect(result.code).to.equal(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines, result.stderr).to.have.length(1);
      expect(lines[0]).to.contain(`User "wsapi_limited" may not create tables in database "${name}" (DATABASE_URL`);
      const fix = postgres ? /or: (GRANT CREATE ON SCHEMA "public" TO "wsapi_limited";)/.exec(lines[0] ?? '')?.[1] : /run: (GRANT ALL ON `[^`]+`\.\* TO 'wsapi_limited'@'%';)/.exec(lines[0] ?? '')?.[1];
      expect(fix, lines[0]).to.be.a('string');
      if (postgres) expect(lines[0]).to.contain(`Have an administrator run: ALTER DATABASE "${name}" OWNER TO "wsapi_limited";`);
      // The line as given, run by an administrator (on PostgreSQL in that database): then the service migrates.
      const by = postgres ? knex({ client: 'pg', connection: server!.urlOf(name) }) : admin;
      try {
        await by.raw(fix!);
      } finally {
        if (postgres) await by.destroy();
      }
      const migrate = await run('src/cli/migrate.ts', [], { DATABASE_URL: url });
      expect(migrate.code, migrate.stderr).to.equal(0);
    });
  });
});
