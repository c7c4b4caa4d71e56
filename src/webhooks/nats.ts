import net from 'node:net';
import { connect, headers as natsHeaders, type NatsConnection, type TlsOptions } from 'nats';
import type { Clock } from '../common/clock.js';
import { deliveryHeaders, startAttempt, type Message, type Outcome } from './send.js';
import { bareHost, checkHost, DestinationError, type Resolve } from './ssrf.js';

/**
 * NATS destinations (docs/reference.md section 16): `nats://host:port/<subject>`, or `tls://` for a server
 * that takes clients over TLS (NATS's own spelling; the certificate is checked against the
 * URL's host, as for https), each delivery published
 * to JetStream with the event as its body and the Standard Webhooks headers as message headers,
 * deduplicated by the event and subscription (`Nats-Msg-Id` `<event id>:<subscription id>`: a
 * retry that JetStream already holds is dropped, while two subscriptions that publish one event
 * into the same stream each keep their copy), and counted delivered once JetStream
 * acknowledges it. No acknowledgement in time (no stream takes the subject, the server is down)
 * is a failed attempt with its reason, retried like HTTP.
 */

export const NATS_PORT = 4222;

/** A subject as NATS takes it for a publish: dot-separated tokens, no wildcard, no space. */
const SUBJECT = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

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
    const key = `${url.protocol}//${bareHost(url)}@${server}|${user}|${pass}`;
    let pending = connections.get(key);
    if (!pending) {
      const options = {
        servers: server,
        timeout: timeoutMs,
        reconnect: false,
        name: 'workspace-api-webhooks',
        // A user without a password is a token (nats://<token>@host), as NATS's own tools read it.
        ...(user && pass ? { user, pass } : user ? { token: user } : {}),
      };
      const overTls = { ...options, tls: tlsTo(bareHost(url)) };
      // tls:// takes TLS only. nats:// takes it when the server offers it (as NATS's clients
      // do), checked against the URL's host too, and plain when the server offers none.
      pending = url.protocol === 'tls:' ? connect(overTls) : connect(overTls).catch((err: unknown) => (offersNoTls(err) ? connect(options) : Promise.reject(err)));
      connections.set(key, pending);
      pending.then(
        (nc) => void nc.closed().then(() => connections.delete(key)),
        () => connections.delete(key),
      );
    }
    return pending;
  }

  async function send(message: Message & { subscriptionId: string }): Promise<Outcome> {
    const done = startAttempt(clock);
    try {
      const url = new URL(message.url);
      const subject = decodeURIComponent(url.pathname.slice(1));
      const nc = await connectionTo(url);
      const h = natsHeaders();
      h.set('content-type', 'application/json');
      for (const [name, value] of Object.entries(deliveryHeaders(message))) h.set(name, value);
      const ack = await nc.jetstream().publish(subject, new TextEncoder().encode(message.body), { msgID: `${message.eventId}:${message.subscriptionId}`, headers: h, timeout: timeoutMs });
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

/**
 * Node's TLS options for a server whose socket goes to the address just checked: the certificate
 * is checked against the URL's host, named by SNI (an address is checked as one, without SNI,
 * which RFC 6066 does not allow). nats.js hands them to tls.connect, though its type names only
 * its own.
 */
function tlsTo(host: string): TlsOptions {
  const options: TlsOptions & ({ servername: string } | { host: string }) = net.isIP(host) ? { host } : { servername: host };
  return options;
}

/** The refusal nats.js gives when TLS was asked of a server that offers none. */
function offersNoTls(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === 'SERVER_OPT_NA' && e.message === 'tls';
}

function describe(err: unknown): string {
  const e = err as Error & { code?: string };
  if (err instanceof DestinationError) return `refused: ${e.message}`;
  if (e.code === '503') return 'no JetStream stream takes this subject (no responders)';
  if (e.code === 'TIMEOUT') return 'no acknowledgement in time';
  return `NATS ${e.code ?? e.name}: ${e.message}`.slice(0, 500);
}
