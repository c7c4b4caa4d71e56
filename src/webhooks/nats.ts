import net from 'node:net';
import { connect, headers as natsHeaders, type NatsConnection, type TlsOptions } from 'nats';
import type { Clock } from '../common/clock.js';
import type { Message, Outcome } from './send.js';
import { signatureHeader } from './signing.js';
import { bareHost, checkHost, DestinationError, type Resolve } from './ssrf.js';

/**
 * NATS destinations (API.md section 16): `nats://host:port/<subject>`, or `tls://` for a server
 * that takes clients over TLS (NATS's own spelling; the certificate is checked against the
 * URL's host, as for https), each delivery published
 * to JetStream with the event as its body and the Standard Webhooks headers as message headers,
 * deduplicated by the event id (`Nats-Msg-Id`), and counted delivered once JetStream
 * acknowledges it. No acknowledgement in time (no stream takes the subject, the server is down)
 * is a failed attempt with its reason, retried like HTTP.
 */

export const NATS_PORT = 4222;

/** A subject as NATS takes it for a publish: dot-separated tokens, no wildcard, no space. */
const SUBJECT = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/** The schemes of NATS destinations: `tls:` is NATS over TLS. */
export const NATS_SCHEMES: ReadonlySet<string> = new Set(['nats:', 'tls:']);

/** What is wrong with a `nats:` (or `tls:`) URL's subject or form, or undefined. */
export function natsUrlError(url: URL): string | undefined {
  if (url.search) return 'must not have a query string';
  const subject = decodeURIComponent(url.pathname.slice(1));
  if (!SUBJECT.test(subject) || subject.length > 255) return 'must name a NATS subject as its path (nats://host:4222/<subject>: dot-separated tokens of letters, digits, - and _, no wildcards)';
  return undefined;
}

/** Publishes signed deliveries to NATS JetStream, one connection per server address (see createNatsSender). */
export type NatsSender = ReturnType<typeof createNatsSender>;

export function createNatsSender(options: { resolve: Resolve; allowPrivate: boolean; timeoutMs: number; clock: Clock }) {
  const { resolve, allowPrivate, timeoutMs, clock } = options;
  const connections = new Map<string, Promise<NatsConnection>>();

  /** A connection to the URL's server, at an address just checked as allowed (as HTTP delivery connects). */
  async function connectionTo(url: URL): Promise<NatsConnection> {
    const [address] = await checkHost(bareHost(url), resolve, allowPrivate);
    if (address === undefined) throw new DestinationError(`${url.hostname} does not resolve`);
    const server = `${net.isIPv6(address) ? `[${address}]` : address}:${url.port || NATS_PORT}`;
    const user = decodeURIComponent(url.username);
    const pass = decodeURIComponent(url.password);
    // Over TLS the socket goes to the address just checked, and the certificate is checked against the URL's host.
    // (nats.js hands its tls options to Node's tls.connect, servername with them, though its type names only its own.)
    const tls: TlsOptions & { servername: string } = { servername: bareHost(url) };
    const key = `${url.protocol}//${bareHost(url)}@${server}|${user}|${pass}`;
    let pending = connections.get(key);
    if (!pending) {
      pending = connect({
        servers: server,
        timeout: timeoutMs,
        reconnect: false,
        name: 'workspace-api-webhooks',
        // A user without a password is a token (nats://<token>@host), as NATS's own tools read it.
        ...(user && pass ? { user, pass } : user ? { token: user } : {}),
        ...(url.protocol === 'tls:' ? { tls } : {}),
      });
      connections.set(key, pending);
      pending.then(
        (nc) => void nc.closed().then(() => connections.delete(key)),
        () => connections.delete(key),
      );
    }
    return pending;
  }

  async function send(message: Message): Promise<Outcome> {
    const startedAt = clock.now();
    const started = performance.now();
    const done = (o: Omit<Outcome, 'startedAt' | 'durationMs'>): Outcome => ({ startedAt, durationMs: Math.round(performance.now() - started), ...o });
    try {
      const url = new URL(message.url);
      const subject = decodeURIComponent(url.pathname.slice(1));
      const nc = await connectionTo(url);
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = signatureHeader(message.secrets, message.eventId, timestamp, message.body);
      const h = natsHeaders();
      h.set('content-type', 'application/json');
      h.set('webhook-id', message.eventId);
      h.set('webhook-timestamp', String(timestamp));
      h.set('webhook-signature', signature);
      const ack = await nc.jetstream().publish(subject, new TextEncoder().encode(message.body), { msgID: message.eventId, headers: h, timeout: timeoutMs });
      return done({ status: null, acknowledged: true, excerpt: `stream ${ack.stream}, sequence ${ack.seq}${ack.duplicate ? ' (already there)' : ''}`, error: null });
    } catch (err) {
      return done({ status: null, excerpt: null, error: describe(err) });
    }
  }

  async function close(): Promise<void> {
    const open = [...connections.values()];
    connections.clear();
    await Promise.allSettled(open.map(async (pending) => (await pending).drain()));
  }

  return { send, close };
}

function describe(err: unknown): string {
  const e = err as Error & { code?: string };
  if (err instanceof DestinationError) return `refused: ${e.message}`;
  if (e.code === '503') return 'no JetStream stream takes this subject (no responders)';
  if (e.code === 'TIMEOUT') return 'no acknowledgement in time';
  return `NATS ${e.code ?? e.name}: ${e.message}`.slice(0, 500);
}
