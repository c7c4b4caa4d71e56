import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { HttpLimits } from '../config.js';
import { ApiError, toProblem, type ErrorCode } from '../errors.js';

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
 * A problem+json answer written straight to the socket, for a request the parser refused. Not
 * when the app has begun an answer on this connection: that would corrupt it, so it is closed.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, limits: HttpLimits, answering: WeakMap<Duplex, http.ServerResponse>): void {
  if (error.code === 'ECONNRESET' || !socket.writable || answering.get(socket)?.headersSent === true) {
    socket.destroy();
    return;
  }
  const code = clientErrorCode(error.code);
  const requestId = randomUUID();
  const problem = new ApiError(code, DETAILS[code]?.(limits) ?? 'The request was refused.');
  const body = JSON.stringify(toProblem(problem, requestId));
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * The HTTP server around the app, with limits on what one client may hold: the time to send
 * headers and the whole request, the idle time of a keep-alive connection, and the number of
 * connections at once (more are closed as they arrive). What node:http refuses before the app
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
  server.maxConnections = limits.maxConnections;
  const answering = new WeakMap<Duplex, http.ServerResponse>();
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    answering.set(req.socket, res);
    res.once('close', () => answering.delete(req.socket));
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => answerClientError(error, socket, limits, answering));
  let lastDropLog = 0;
  server.on('drop', () => {
    const now = Date.now();
    if (now - lastDropLog > 10_000) {
      lastDropLog = now;
      log.warn({ max_connections: limits.maxConnections }, 'connection refused: HTTP_MAX_CONNECTIONS reached');
    }
  });
  return server;
}
