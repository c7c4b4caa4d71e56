import http from 'node:http';
import net from 'node:net';
import { expect } from 'chai';
import { startApp, waitFor, type TestApp } from '../helpers/app.js';
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
    expect(answer.closedAfterMs).to.be.within(1900, 7000);
  });

  it('ends headers that do not arrive within the headers time (1 s) with 408, without a body (the method never came whole)', async () => {
    const answer = await raw(app.url, ['GET /v1/health HTTP/1.1\r\nHost: x\r\n', 3000, 'X-Late: 1\r\n\r\n']);
    expect(answer.status).to.equal(408);
    expect(answer.headers['content-length']).to.equal('0');
    expect(answer.body).to.equal('');
    expect(answer.closedAfterMs).to.be.within(900, 6000);
  });

  it('ends a connection that sends nothing after the headers time (1 s), counted from connect', async () => {
    const answer = await raw(app.url, [5000]);
    expect(answer.status).to.equal(408);
    expect(answer.headers['x-request-id']).to.be.a('string');
    expect(answer.closedAfterMs).to.be.within(900, 6000);
  });

  it('ends headers sent a byte every 200 ms after the headers time (1 s), though bytes keep coming', async () => {
    const head = `GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`;
    const answer = await raw(app.url, [...head].flatMap((c) => [c, 200]));
    expect(answer.status).to.equal(408);
    expect(answer.closedAfterMs).to.be.within(900, 6000);
  });

  it('closes an idle keep-alive connection after the keep-alive time (1 s)', async () => {
    const answer = await raw(app.url, [`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`]);
    expect(answer.status).to.equal(200);
    expect(answer.closedAfterMs).to.be.within(900, 6000);
  });

  it('at HTTP_MAX_CONNECTIONS (5), a new connection takes the place of the one idle longest', async () => {
    const silent = await openSockets(app, 5);
    const served = await raw(app.url, [`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`]);
    expect(served.status).to.equal(200);
    // The first silent connection made room; the others still hold their slots.
    expect(silent[0]?.closed).to.equal(true);
    expect(silent.slice(1).map((s) => s.closed)).to.deep.equal([false, false, false, false]);
    for (const s of silent) s.destroy();
  });

  it('at HTTP_MAX_CONNECTIONS (5) busy with requests, the next connection is closed at once, and served once one frees', async () => {
    const busy = await openSockets(app, 5);
    // Each sends whole headers and waits with its body: a request in progress, not idle.
    const requests = seen(app.server, 'request');
    for (const s of busy) s.write(`POST /v1/deals HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
    await waitFor(() => requests() >= 5, 5000, 'the server to read the five requests');
    const refused = await raw(app.url, [`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`]);
    expect(refused.status).to.equal(0);
    expect(refused.closedAfterMs).to.be.below(3000);
    expect(busy.map((s) => s.closed)).to.deep.equal([false, false, false, false, false]);
    busy[0]?.destroy();
    await waitFor(() => serverSocketOf(busy[0]!)?.destroyed === true, 5000, 'the server to close its end');
    const served = await raw(app.url, [`GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`]);
    expect(served.status).to.equal(200);
    for (const s of busy) s.destroy();
  });
});

describe('a HEAD request refused before the app', () => {
  let app: TestApp;
  let token: string;
  before(async () => {
    app = await startApp();
    ({ token } = await app.workspaceWithKey());
  });
  after(() => app.close());

  it('answers HEAD with a URL over 16 KiB 431 without a body, which the client of node:http reads whole', async () => {
    const { port } = new URL(app.url);
    const answer = await new Promise<{ status: number; length: string | undefined; body: string }>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: Number(port), method: 'HEAD', path: `/v1/health?q=${'x'.repeat(20 * 1024)}`, headers: { authorization: `Bearer ${token}` } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, length: res.headers['content-length'], body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer).to.deep.equal({ status: 431, length: '0', body: '' });
    // A GET of the same still gets its problem+json.
    await problem(await app.request(`/v1/health?q=${'x'.repeat(20 * 1024)}`, { token }), 431, 'headers_too_large');
  });

  it('answers HEAD as the app answers: headers only', async () => {
    const answer = await raw(app.url, [`HEAD /v1/nothing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`]);
    expect(answer.status).to.equal(404);
    expect(answer.body).to.equal('');
  });
});

describe('a thousand silent connections', () => {
  let app: TestApp;
  before(async () => {
    // Default headers time (10 s): the silent ones are not timed out during the test.
    app = await startApp({ env: { HTTP_MAX_CONNECTIONS: '50' } });
  });
  after(() => app.close());

  it('do not lock a client out: with 300 open (6 times the cap), GET /livez answers at once', async () => {
    const silent = await openSockets(app, 300);
    const answer = await raw(app.url, ['GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    expect(answer.status).to.equal(200);
    expect(silent.filter((s) => !s.closed)).to.have.length.within(40, 49);
    for (const s of silent) s.destroy();
  });
});

/** How many times `server` has emitted `event` since this call. */
function seen(server: http.Server, event: 'connection' | 'request'): () => number {
  let n = 0;
  server.on(event, () => (n += 1));
  return () => n;
}

/** The server's end of each connection openSockets() made, by the client's end. */
const serverEnds = new WeakMap<net.Socket, net.Socket>();
const serverSocketOf = (client: net.Socket) => serverEnds.get(client);

/** `count` connections that send nothing, open once each is connected and the server has seen them all. */
async function openSockets(app: TestApp, count: number): Promise<net.Socket[]> {
  const { port } = new URL(app.url);
  const accepted = seen(app.server, 'connection');
  const ends = new Map<number, net.Socket>();
  const keep = (socket: net.Socket) => ends.set(socket.remotePort ?? 0, socket);
  app.server.on('connection', keep);
  const sockets: net.Socket[] = [];
  for (let i = 0; i < count; i += 1) {
    sockets.push(await new Promise<net.Socket>((resolve) => {
      const s = net.connect(Number(port), '127.0.0.1', () => resolve(s));
      s.on('error', () => undefined);
    }));
  }
  await waitFor(() => accepted() >= count, 10_000, `the server to see ${count} connections`);
  app.server.off('connection', keep);
  for (const s of sockets) {
    const end = ends.get(s.localPort ?? -1);
    if (end) serverEnds.set(s, end);
  }
  return sockets;
}
