import net from 'node:net';
import { expect } from 'chai';
import { startApp, type TestApp } from '../helpers/app.js';
import { problem } from '../helpers/problem.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from connecting until the server closed the connection. */
  closedAfterMs: number;
}

/** A raw connection: sends `chunks` (a number is a pause in ms), reads until the server closes. */
function raw(url: string, chunks: Array<string | number>, giveUpMs = 8000): Promise<RawAnswer> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(Number(port), '127.0.0.1');
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${giveUpMs} ms`));
    }, giveUpMs);
    socket.on('data', (d) => (data += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', body = ''] = data.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body, closedAfterMs: Date.now() - started });
    });
    socket.on('connect', async () => {
      for (const chunk of chunks) {
        if (typeof chunk === 'number') await new Promise((r) => setTimeout(r, chunk));
        else if (!socket.destroyed) socket.write(chunk);
      }
    });
  });
}

function expectProblem(answer: RawAnswer, status: number, code: string): void {
  expect(answer.status, answer.body).to.equal(status);
  expect(answer.headers['content-type']).to.equal('application/problem+json');
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect(body).to.include({ type: 'about:blank', status, code });
  expect(body.request_id).to.equal(answer.headers['x-request-id']);
  expect(String(body.detail)).to.have.length.greaterThan(10);
}

describe('what one client connection may hold', () => {
  let app: TestApp;
  let token: string;
  before(async () => {
    app = await startApp({ env: { HTTP_REQUEST_TIMEOUT_SECONDS: '2', HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_KEEPALIVE_TIMEOUT_SECONDS: '1', HTTP_MAX_CONNECTIONS: '5' } });
    ({ token } = await app.workspaceWithKey());
  });
  after(() => app.close());

  it('answers 431 headers_too_large as problem+json for a URL or headers over 16 KiB, a documented answer', async () => {
    await problem(await app.request(`/v1/deals?pad=${'x'.repeat(17 * 1024)}`, { token }), 431, 'headers_too_large');
    await problem(await app.request('/v1/deals', { token, headers: { 'x-padding': 'y'.repeat(17 * 1024) } }), 431, 'headers_too_large');
  });

  it('answers 400 malformed_request as problem+json for a request line that is not HTTP', async () => {
    const answer = await raw(app.url, ['NOT A REQUEST\r\n\r\n']);
    expectProblem(answer, 400, 'malformed_request');
  });

  it('ends a body sent a byte at a time with 408 request_timeout once the request time (2 s) is up', async () => {
    const head = `POST /v1/deals HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const answer = await raw(app.url, [head, ...Array.from({ length: 40 }, (_, i) => [200, i === 0 ? '{' : ' ']).flat()]);
    expectProblem(answer, 408, 'request_timeout');
    // Checked each second: the limit, plus at most one check interval and a little.
    expect(answer.closedAfterMs).to.be.within(1900, 3800);
  });

  it('ends headers that do not arrive within the headers time (1 s) with 408', async () => {
    const answer = await raw(app.url, ['GET /v1/health HTTP/1.1\r\nHost: x\r\n', 3000, 'X-Late: 1\r\n\r\n']);
    expectProblem(answer, 408, 'request_timeout');
    expect(answer.closedAfterMs).to.be.within(900, 2800);
  });

  it('closes an idle keep-alive connection after the keep-alive time (1 s)', async () => {
    const answer = await raw(app.url, [`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`]);
    expect(answer.status).to.equal(200);
    expect(answer.closedAfterMs).to.be.within(900, 2800);
  });

  it('holds at most HTTP_MAX_CONNECTIONS (5) connections: the next is closed at once, and served once one frees', async () => {
    const { port } = new URL(app.url);
    const open = await Promise.all(
      Array.from({ length: 5 }, () => new Promise<net.Socket>((resolve) => { const s = net.connect(Number(port), '127.0.0.1', () => resolve(s)); s.on('error', () => undefined); })),
    );
    await new Promise((r) => setTimeout(r, 50));
    const refused = await raw(app.url, [`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`]);
    expect(refused.status).to.equal(0);
    expect(refused.closedAfterMs).to.be.below(500);
    open[0]?.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const served = await raw(app.url, [`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`]);
    expect(served.status).to.equal(200);
    for (const s of open) s.destroy();
  });
});
