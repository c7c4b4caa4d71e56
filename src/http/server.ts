import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { HttpLimits } from '../common/config.js';
import { ApiError, toProblem, type ErrorCode } from '../common/errors.js';
import { guardConnections } from './connections.js';

/** How often node:http checks the request and header timeouts (its default, 30 s, would let a slow client stay that much longer). */
const TIMEOUT_CHECK_MS = 1000;

/** What node:http's parser reports, as our error codes: these answers never reach the app. */
function clientErrorCode(code: string | undefined): ErrorCode {
  if (code === 'HPE_HEADER_OVERFLOW') return 'headers_too_large';
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'malformed_request';
}

const DETAILS: Partial<Record<ErrorCode, (limits: HttpLimits) => string>> = {
  headers_too_large: () => `The request line and headers are over ${http.maxHeaderSize} bytes; shorten the URL or the headers.`,
  request_timeout: (l) => `The request did not arrive in time: headers within ${l.headersTimeoutMs / 1000} s, the whole request within ${l.requestTimeoutMs / 1000} s.`,
  malformed_request: () => 'The request is not valid HTTP/1.1.',
};

/**
 * The method of the request a refused packet began, when the packet holds its request line.
 * A packet that continues a request begun earlier (large headers arrive in several) does not
 * say it: then undefined.
 */
function methodOf(packet: unknown): string | undefined {
  if (!Buffer.isBuffer(packet)) return undefined;
  return /^([A-Z]{3,10}) /.exec(packet.subarray(0, 12).toString('latin1'))?.[1];
}

/**
 * A problem+json answer written straight to the socket, for a request the parser refused.
 * Without its body when the request was a HEAD, or when its method is unknown (a HEAD answer
 * never carries a body; an empty one is still a whole answer to anything else). Not when the
 * app has begun an answer on this connection: that would corrupt it, so it is closed.
 */
function answerRaw(socket: Duplex, code: ErrorCode, limits: HttpLimits, method: string | undefined): void {
  const requestId = randomUUID();
  const problem = new ApiError(code, DETAILS[code]?.(limits) ?? 'The request was refused.');
  const body = method === undefined || method === 'HEAD' ? '' : JSON.stringify(toProblem(problem, requestId));
  const type = body === '' ? '' : 'Content-Type: application/problem+json\r\n';
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\n${type}Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

function answerClientError(error: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Duplex, limits: HttpLimits, answering: WeakMap<Duplex, http.ServerResponse>): void {
  const res = answering.get(socket);
  if (error.code === 'ECONNRESET' || !socket.writable || res?.headersSent === true) {
    socket.destroy();
    return;
  }
  answerRaw(socket, clientErrorCode(error.code), limits, res?.req.method ?? methodOf(error.rawPacket));
}

/**
 * The HTTP server around the app, with limits on what one client may hold: the time to send
 * headers and the whole request, the idle time of a keep-alive connection, and the number of
 * connections at once (connections.ts). What node:http refuses before the app
 * sees it (headers too large, a malformed request, a timeout) is answered as problem+json too.
 */
export function createHttpServer(handler: http.RequestListener, limits: HttpLimits, log: Logger): http.Server {
  const server = http.createServer(
    {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handler,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  const answering = new WeakMap<Duplex, http.ServerResponse>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    answering.set(req.socket, res);
    res.once('close', () => answering.delete(req.socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, limits, answering));
  let lastRefusalLog = 0;
  const guard = guardConnections(server, {
    maxConnections: limits.maxConnections,
    headersTimeoutMs: limits.headersTimeoutMs,
    checkEveryMs: TIMEOUT_CHECK_MS,
    // It sent no complete request line, so its method is unknown: an answer without a body.
    onHeadersTimeout: (socket: Socket) => (socket.writable ? answerRaw(socket, 'request_timeout', limits, undefined) : socket.destroy()),
    onRefused: () => {
      const now = Date.now();
      if (now - lastRefusalLog > 10_000) {
        lastRefusalLog = now;
        log.warn({ max_connections: limits.maxConnections }, 'connection refused: HTTP_MAX_CONNECTIONS reached and every connection busy with a request');
      }
    },
  });
  server.on('close', () => guard.close());
  return server;
}
