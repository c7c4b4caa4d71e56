import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR } from '../src/common/config.js';
import { waitFor } from './helpers/app.js';
import { documents, parts } from './helpers/docs.js';
import { startServer, type ServerProcess } from './helpers/processes.js';

/**
 * The README's and the guides' shell examples, run as written against a fresh `npm start` (its
 * demo workspace, key and admin): a curl that asks for something the demo data does not have
 * (a search that finds nothing), or that the service refuses for a reason the example does not
 * mean to show, fails here. The examples' placeholders for the demo key and password
 * (`wsk_2vB0...`, `Qm3k...`) are what the server printed; one naming an object by a made-up id
 * (`deal_...`) cannot run as written, and is listed as skipped.
 */

/** Refusals an example may show on purpose, where it says so: of a body (422), or of a move the state machine refuses (409). */
const MEANT = new Set(['validation_failed', 'invalid_transition']);

describe('the documentation\'s shell examples, run against a fresh start', () => {
  let dir: string;
  let server: ServerProcess;
  let key: string;
  let password: string;

  before(async function () {
    if (spawnSync('sh', ['-c', 'command -v curl']).status !== 0) this.skip();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsapi-docs-'));
    server = await startServer({ DATABASE_URL: `sqlite:${path.join(dir, 'fresh.db')}` });
    await waitFor(() => /password: +\S+/.test(server.output()), 5000, 'the demo banner');
    key = /wsk_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}/.exec(server.output())![0];
    password = /password: +(\S+)/.exec(server.output())![1]!;
  });
  after(async () => {
    await server?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const examples = documents().flatMap((file) =>
    parts(fs.readFileSync(path.join(ROOT_DIR, file), 'utf8'))
      .blocks.filter((b) => b.lang === 'sh' && b.body.includes('curl') && b.body.includes('127.0.0.1:3000'))
      .map((b) => ({ file, body: b.body })),
  );

  it('finds the examples it runs (the README\'s tour, the consumer\'s and the administration area\'s guides)', () => {
    expect(examples.map((e) => e.file)).to.include.members(['README.md', 'docs/consumer.md', 'docs/administration.md']);
  });

  it('runs each one that names no made-up id: every command succeeds, answers no unintended refusal, and no list comes back empty', function () {
    this.timeout(120_000);
    const origin = new URL(server.url).host;
    const ran: string[] = [];
    const skipped: string[] = [];
    const failed: string[] = [];
    for (const { file, body } of examples) {
      const script = body.replaceAll('wsk_2vB0...', key).replaceAll('Qm3k...', password).replaceAll('127.0.0.1:3000', origin);
      const title = `${file}: ${body.split('\n').find((l) => l.includes('curl'))!.trim().slice(0, 100)}`;
      // A made-up id (`invoice_...`, `ws_...`) or a placeholder in angle brackets cannot run as written.
      const commands = script.split('\n').filter((line) => !/^\s*#/.test(line)).join('\n');
      if (/\b[a-z]+_\.\.\.|<[a-z_ -]+>/.test(commands.replaceAll(key, ''))) {
        skipped.push(title);
        continue;
      }
      const out = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '', KEY: key }, timeout: 30_000 });
      ran.push(title);
      // A refusal is meant only where the block says so in a comment (`# ... refused ...`).
      const meant = /^\s*#.*\brefus/im.test(script);
      const problems = [...out.stdout.matchAll(/"code":"([a-z_]+)"/g)].map((m) => m[1]!).filter((code) => !(meant && MEANT.has(code)));
      if (out.status !== 0) failed.push(`${title}: exit ${out.status}: ${out.stderr.slice(0, 300)}`);
      else if (/"status":5\d\d|HTTP\/1\.1 5\d\d/.test(out.stdout)) failed.push(`${title}: a 5xx: ${out.stdout.slice(0, 300)}`);
      else if (problems.length > 0) failed.push(`${title}: refused (${problems.join(', ')}): ${out.stdout.slice(0, 300)}`);
      else if (out.stdout.includes('{"data":[]')) failed.push(`${title}: found nothing in the demo data`);
    }
    console.log(`      ran ${ran.length} examples; skipped ${skipped.length} that name a made-up id:\n${skipped.map((s) => `        ${s}`).join('\n')}`);
    expect(failed).to.deep.equal([]);
    expect(ran.length).to.be.at.least(6);
  });
});
