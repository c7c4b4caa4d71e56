import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ROOT_DIR } from '../../src/common/config.js';
import { internal, person, type Person } from '../helpers/admin.js';
import { startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';
import { outcomeOf } from '../helpers/processes.js';

describe('the Developer page over HTTP (/admin/) and the event catalog it shows', () => {
  let app: TestApp;
  let alice: Person;

  before(async () => {
    app = await startApp();
    alice = await person(app);
  });
  after(() => app.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${app.url}${path}`, { headers, redirect: 'manual' });

  it('serves one HTML document whose policy allows nothing from another host, never cached', async () => {
    const res = await get('/admin/');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).to.equal('no-store');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).to.contain("default-src 'none'").and.contain("script-src 'self'").and.contain("connect-src 'self'").and.contain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    const html = await res.text();
    expect(html).to.contain('<script type="module" src="app.js"></script>');
    // Every asset it names is relative to this origin.
    expect(html).not.to.match(/(src|href)="(https?:)?\/\//);
    expect((await get('/admin')).headers.get('location')).to.equal('/admin/');
  });

  it('serves the script gzipped when asked, revalidates by ETag, and refuses other methods and paths', async () => {
    const plain = await get('/admin/app.js', { 'accept-encoding': 'identity' });
    expect(plain.status).to.equal(200);
    expect(plain.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    const body = Buffer.from(await plain.arrayBuffer());
    const zipped = await fetch(`${app.url}/admin/app.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).to.equal('gzip');
    expect(Number(zipped.headers.get('content-length'))).to.be.lessThan(body.length / 2);
    const etag = plain.headers.get('etag') ?? '';
    expect(etag).to.match(/^"[\w-]{22}"$/);
    expect((await get('/admin/app.js', { 'if-none-match': etag })).status).to.equal(304);
    expect((await get('/admin/nothing.js')).status).to.equal(404);
    expect((await get('/admin/%2e%2e%2fpackage.json')).status).to.equal(404);
    const post = await fetch(`${app.url}/admin/`, { method: 'POST' });
    expect(post.status).to.equal(405);
    expect(post.headers.get('allow')).to.equal('GET, HEAD');
    // fetch() unzips: what arrives is the very script.
    expect(Buffer.from(await zipped.arrayBuffer()).equals(body)).to.equal(true);
  });

  it('lists every event with the example payload the public document gives it, to a signed-in user only', async () => {
    await problem(await internal(app, '/events'), 401, 'not_signed_in');
    const res = await internal(app, '/events', { cookie: alice.cookie });
    expect(res.status).to.equal(200);
    const { data } = (await res.json()) as { data: Array<{ name: string; description: string; example: { type: string; data: { object: Record<string, unknown> } } }> };
    const publicDoc = (await (await app.request('/v1/openapi.json')).json()) as { webhooks: Record<string, { post: Record<string, unknown> }> };
    expect(data.map((e) => e.name).sort()).to.deep.equal(Object.keys(publicDoc.webhooks).sort());
    for (const event of data) {
      expect(event.example, event.name).to.deep.equal(publicDoc.webhooks[event.name]?.post['x-payload-example']);
      expect(event.example.type).to.equal(event.name);
    }
    const stageChanged = data.find((e) => e.name === 'deal.stage_changed');
    expect(stageChanged?.description).to.equal('A deal moved to another stage.');
    expect(stageChanged?.example.data.object.id).to.match(/^deal_/);
  });
});

describe('building the Developer page', () => {
  /**
   * Every file the page's build writes (build/admin/, the internal document it types the client
   * from, web/generated/), with its modification time. Not the rest of build/: the other
   * backends' suites, when run beside this one, write their logs, screenshots and the admin
   * command's bundle there meanwhile.
   */
  const snapshot = () => {
    const out: Record<string, number> = {};
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else out[p] = fs.statSync(p).mtimeMs;
      }
    };
    for (const dir of ['build/admin', 'web/generated']) walk(path.join(ROOT_DIR, dir));
    const document = path.join(ROOT_DIR, 'build', 'internal-openapi.json');
    out[document] = fs.statSync(document).mtimeMs;
    return out;
  };

  it('builds nothing when its inputs did not change: npm run build:web (as npm start runs it) writes no file', async function () {
    this.timeout(180_000);
    const buildWeb = () => outcomeOf(spawn('npm', ['run', 'build:web'], { cwd: ROOT_DIR, env: process.env }));
    // Up to date first (npm test's pretest has built it already: then this builds nothing either).
    expect((await buildWeb()).code).to.equal(0);
    const before = snapshot();
    const result = await buildWeb();
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.contain('nothing to build');
    expect(snapshot()).to.deep.equal(before);
  });
});
