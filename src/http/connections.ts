import type http from 'node:http';
import type { Socket } from 'node:net';

/** How a connection the guard closes is told: `answer` may write a 408 before the socket ends. */
export interface ConnectionGuardOptions {
  maxConnections: number;
  headersTimeoutMs: number;
  /** How often connections that never sent their headers are looked for. */
  checkEveryMs: number;
  /** A connection that did not send its first headers in time: answer it (408) and close it. */
  onHeadersTimeout(socket: Socket): void;
  /** A new connection refused because every open one is busy with a request. */
  onRefused(): void;
}

/**
 * What one client connection may hold, beyond what node:http checks itself.
 *
 * node:http times headers out only once a request has begun: a connection that sends nothing
 * holds its slot for ever, and at `server.maxConnections` every new connection is dropped, so
 * a thousand silent sockets lock every client out. Here a connection must complete its first
 * request's headers within the headers time counted from connect, whether or not bytes
 * trickle in (later requests on a keep-alive connection are node's: headers timeout from their
 * first byte, keep-alive timeout between them). And at the cap, a new connection takes the
 * place of the connection idle longest (one waiting for its first headers, or a keep-alive
 * between requests); only when every connection is busy with a request is the new one refused.
 */
export function guardConnections(server: http.Server, options: ConnectionGuardOptions): { close(): void } {
  // Both in the order they became idle (a Set keeps insertion order): the first is idle longest.
  const idle = new Set<Socket>();
  const awaitingHeaders = new Map<Socket, number>();
  let open = 0;

  server.on('connection', (socket: Socket) => {
    open += 1;
    socket.once('close', () => {
      open -= 1;
      idle.delete(socket);
      awaitingHeaders.delete(socket);
    });
    if (open > options.maxConnections) {
      const oldest = idle.values().next().value;
      if (oldest === undefined) {
        options.onRefused();
        socket.destroy();
        return;
      }
      idle.delete(oldest);
      awaitingHeaders.delete(oldest);
      oldest.destroy();
    }
    idle.add(socket);
    awaitingHeaders.set(socket, Date.now());
  });

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    awaitingHeaders.delete(socket);
    res.once('finish', () => {
      if (!socket.destroyed) idle.add(socket);
    });
  });

  const timer = setInterval(() => {
    const expired = Date.now() - options.headersTimeoutMs;
    for (const [socket, connectedAt] of awaitingHeaders) {
      if (connectedAt > expired) break; // in connect order: the rest came later
      awaitingHeaders.delete(socket);
      idle.delete(socket);
      options.onHeadersTimeout(socket);
    }
  }, options.checkEveryMs);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
