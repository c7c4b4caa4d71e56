import net from 'node:net';
import { Agent, request } from 'undici';
import type { Clock } from '../common/clock.js';
import { NUL } from '../common/wire.js';
import { retryAfterMs } from './schedule.js';
import { signedHeaders } from './signing.js';
import { bareHost, checkHost, DestinationError, type Resolve } from './ssrf.js';

/** An attempt begun now: what it came to, with when it started (the service's clock) and how long it took. */
export function startAttempt(clock: Clock): (outcome: Omit<Outcome, 'startedAt' | 'durationMs'>) => Outcome {
  const startedAt = clock.now();
  const started = performance.now();
  return (outcome) => ({ startedAt, durationMs: Math.round(performance.now() - started), ...outcome });
}

/** What one attempt came to. */
export interface Outcome {
  startedAt: number;
  durationMs: number;
  /** The receiver's status, when it answered. */
  status: number | null;
  /** The first KiB of its answer. */
  excerpt: string | null;
  error: string | null;
  /** The receiver's Retry-After on 429 or 503, in ms. */
  retryAfterMs?: number;
  /** A destination that answers no HTTP status took it (a JetStream acknowledgement). */
  acknowledged?: boolean;
}

export interface Message {
  url: string;
  eventId: string;
  body: string;
  secrets: readonly string[];
  /** The attempt's span as W3C trace context, sent beside the signature; null without traces. */
  traceparent: string | null;
}

/** A delivery's headers on every transport: Standard Webhooks' signature, and `traceparent` when traced. */
export function deliveryHeaders(message: Message): Record<string, string> {
  const signed: Record<string, string> = signedHeaders(message);
  if (message.traceparent) signed.traceparent = message.traceparent;
  return signed;
}

const EXCERPT_BYTES = 1024;
/** An answer is read this far so the connection can be reused; a longer one closes it. */
const DRAIN_BYTES = 64 * 1024;

type LookupCallback = (err: Error | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/**
 * net.connect's `lookup`, checked: resolves with our resolver and refuses the whole host if
 * any address is not public. The socket then connects to an address that was just checked, so
 * a DNS answer cannot change between the check and the connection.
 */
function guardedLookup(resolve: Resolve, allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    checkHost(hostname, resolve, allowPrivate).then(
      (addresses) => {
        if (options.all) callback(null, addresses.map((address) => ({ address, family: net.isIP(address) })));
        else callback(null, addresses[0] as string, net.isIP(addresses[0] as string));
      },
      (err: Error) => callback(err, ''),
    );
  };
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < EXCERPT_BYTES) chunks.push(chunk);
    size += chunk.length;
    if (size > DRAIN_BYTES) {
      body.destroy();
      break;
    }
  }
  // Bytes that are not UTF-8 read as U+FFFD, and so does a NUL byte, which PostgreSQL's text cannot hold.
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replaceAll(NUL, '\uFFFD');
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { code?: string; cause?: Error & { code?: string } };
  const cause = e.cause ?? e;
  if (cause instanceof DestinationError) return `refused: ${cause.message}`;
  if (e.name === 'TimeoutError' || e.name === 'AbortError' || cause.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  if (cause.code === 'UND_ERR_CONNECT_TIMEOUT') return `could not connect within ${timeoutMs / 1000} s`;
  return `${cause.code ?? cause.name}: ${cause.message}`.slice(0, 500);
}

/**
 * Sends signed deliveries: Standard Webhooks headers plus X-Service-Signature, one attempt per
 * call, no redirects followed, everything within `timeoutMs`.
 */
/** Sends signed webhook requests (see createSender). */
export type Sender = ReturnType<typeof createSender>;

export function createSender(options: { resolve: Resolve; allowPrivate: boolean; timeoutMs: number; clock: Clock }) {
  const { resolve, allowPrivate, timeoutMs, clock } = options;
  const agent = new Agent({ connect: { lookup: guardedLookup(resolve, allowPrivate), timeout: timeoutMs }, keepAliveTimeout: 30_000, connections: 32 });

  async function send(message: Message): Promise<Outcome> {
    const done = startAttempt(clock);
    try {
      const url = new URL(message.url);
      // Credentials in the URL (https://user:pass@host/...) go as HTTP Basic authentication, as
      // receivers that ask for it expect (undici would drop them silently).
      const authorization = url.username || url.password ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined;
      url.username = '';
      url.password = '';
      // An address in the URL itself needs no lookup, so it is checked here instead.
      const host = bareHost(url);
      if (net.isIP(host)) await checkHost(host, resolve, allowPrivate);
      const signed = deliveryHeaders(message);
      const res = await request(url, {
        method: 'POST',
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'WorkspaceAPI-Webhooks/1',
          ...signed,
          'x-service-signature': signed['webhook-signature'],
          ...(authorization ? { authorization } : {}),
        },
        body: message.body,
      });
      const excerpt = await readExcerpt(res.body);
      const status = res.statusCode;
      const ok = status >= 200 && status < 300;
      const retryAfter = status === 429 || status === 503 ? retryAfterMs(String(res.headers['retry-after'] ?? ''), clock.now()) : undefined;
      return done({ status, excerpt, error: ok ? null : status >= 300 && status < 400 ? `redirect to ${String(res.headers.location ?? '?')} not followed` : `answered ${status}`, ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}) });
    } catch (err) {
      return done({ status: null, excerpt: null, error: describe(err, timeoutMs) });
    }
  }

  return { send, close: () => agent.close() };
}
