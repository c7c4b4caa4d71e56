import net from 'node:net';
import amqp from 'amqplib';
import type { Clock } from '../common/clock.js';
import { deliveryHeaders, startAttempt, type Message, type Outcome } from './send.js';
import { bareHost, checkHost, DestinationError, type Resolve } from './ssrf.js';

/**
 * RabbitMQ destinations (docs/reference.md section 16): `amqp://user:pass@host:port/<exchange>` (on the
 * vhost `/`) or `amqp://user:pass@host:port/<vhost>/<exchange>` (as managed brokers give each
 * customer a vhost of its own; `%2F` writes `/` in it), or
 * `amqps://` for AMQP over TLS (the broker's certificate checked against the URL's host, as
 * for https; port 5671 by default), each
 * delivery published to the exchange (routing key: the event type) with the event as its body
 * and the Standard Webhooks headers as message headers, persistent, and counted delivered once
 * the broker confirms it (publisher confirms). A missing exchange, a refused login or a broker
 * that is down is a failed attempt with its reason, retried like HTTP.
 */

export const AMQP_PORT = 5672;
/** AMQP over TLS (amqps://). */
export const AMQPS_PORT = 5671;

/** An exchange name as AMQP 0-9-1 takes it: letters, digits, hyphen, underscore, period, colon. */
const EXCHANGE = /^[A-Za-z0-9_.:-]{1,127}$/;

/** A vhost name: 1 to 255 characters, none a control character. */
const VHOST = /^[^\p{Cc}]{1,255}$/u;

/** The vhost and exchange an `amqp:` or `amqps:` URL's path names (`/<exchange>` or `/<vhost>/<exchange>`), or undefined when it names none. */
export function amqpTarget(url: URL): { vhost: string; exchange: string } | undefined {
  const parts = url.pathname.slice(1).split('/');
  if (parts.length > 2) return undefined;
  const [exchange, vhost] = [decodeURIComponent(parts.at(-1) ?? ''), parts.length === 2 ? decodeURIComponent(parts[0] ?? '') : '/'];
  return EXCHANGE.test(exchange) && VHOST.test(vhost) ? { vhost, exchange } : undefined;
}

/** What is wrong with an `amqp:` URL's exchange or form, or undefined. */
export function amqpUrlError(url: URL): string | undefined {
  if (url.search) return 'must not have a query string';
  if (!amqpTarget(url)) return 'must name an exchange as its path, after a vhost if not /: amqp://user:pass@host:5672/<exchange> or /<vhost>/<exchange> (an exchange of letters, digits, -, _, . and :, at most 127)';
  return undefined;
}

interface Link {
  connection: amqp.ChannelModel;
  channel: amqp.ConfirmChannel;
}

/**
 * Publishes signed deliveries to RabbitMQ with publisher confirms, one connection and channel per
 * destination (server, login, vhost and exchange): the broker closes a channel that publishes to a
 * missing exchange, which must not fail the deliveries of another destination on the same broker.
 */
export type AmqpSender = ReturnType<typeof createAmqpSender>;

export function createAmqpSender(options: { resolve: Resolve; allowPrivate: boolean; timeoutMs: number; clock: Clock }) {
  const { resolve, allowPrivate, timeoutMs, clock } = options;
  const links = new Map<string, Promise<Link>>();

  /** A confirm channel for the URL's exchange on its broker, at an address just checked as allowed; a channel the broker closed (a missing exchange) is opened again next time. */
  async function linkTo(url: URL, vhost: string, exchange: string): Promise<Link> {
    const [address] = await checkHost(bareHost(url), resolve, allowPrivate);
    if (address === undefined) throw new DestinationError(`${url.hostname} does not resolve`);
    const secure = url.protocol === 'amqps:';
    const port = Number(url.port || (secure ? AMQPS_PORT : AMQP_PORT));
    const username = decodeURIComponent(url.username) || 'guest';
    const password = decodeURIComponent(url.password) || 'guest';
    // Over TLS the socket goes to the address just checked, and the certificate is checked against the URL's host.
    const host = bareHost(url);
    const key = `${url.protocol}//${host}@${net.isIPv6(address) ? `[${address}]` : address}:${port}|${username}|${password}|${vhost}|${exchange}`;
    let pending = links.get(key);
    if (!pending) {
      pending = (async () => {
        const connection = await amqp
          .connect({ protocol: secure ? 'amqps' : 'amqp', hostname: address, port, username, password, vhost, heartbeat: 30 }, { timeout: timeoutMs, ...(secure ? { servername: host } : {}) })
          .catch((err: unknown) => {
            // The broker closes the handshake at the vhost step without a word amqplib passes on.
            if (err instanceof Error && err.message.startsWith('Expected ConnectionOpenOk; got <ConnectionClose')) {
              throw new Error(`the broker refused to open vhost ${vhost} (is there such a vhost, and may ${username} use it?)`);
            }
            throw err;
          });
        connection.on('error', () => undefined);
        connection.on('close', () => links.delete(key));
        const channel = await connection.createConfirmChannel();
        channel.on('error', () => undefined);
        channel.on('close', () => {
          links.delete(key);
          void connection.close().catch(() => undefined);
        });
        return { connection, channel };
      })();
      links.set(key, pending);
      pending.catch(() => links.delete(key));
    }
    return pending;
  }

  async function send(message: Message & { type: string }): Promise<Outcome> {
    const done = startAttempt(clock);
    let timer: NodeJS.Timeout | undefined;
    let onClose: (() => void) | undefined;
    let channel: amqp.ConfirmChannel | undefined;
    try {
      const url = new URL(message.url);
      // Checked when the subscription was written (amqpUrlError).
      const { vhost, exchange } = amqpTarget(url) ?? { vhost: '/', exchange: '' };
      ({ channel } = await linkTo(url, vhost, exchange));
      const open = channel;
      const headers = deliveryHeaders(message);
      const confirmed = new Promise<void>((resolvePublish, reject) => {
        open.publish(
          exchange,
          message.type,
          Buffer.from(message.body),
          { contentType: 'application/json', messageId: message.eventId, persistent: true, headers },
          (err: unknown) => (err ? reject(err instanceof Error ? err : new Error('the broker refused the message')) : resolvePublish()),
        );
      });
      const closed = new Promise<never>((_, reject) => {
        onClose = () => reject(new Error('the broker closed the channel (is there such an exchange?)'));
        open.once('close', onClose);
      });
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no confirmation within ${timeoutMs / 1000} s`)), timeoutMs)));
      await Promise.race([confirmed, closed, late]);
      return done({ status: null, acknowledged: true, excerpt: `confirmed by the broker (exchange ${exchange}, routing key ${message.type})`, error: null });
    } catch (err) {
      return done({ status: null, excerpt: null, error: describe(err) });
    } finally {
      clearTimeout(timer);
      if (onClose) channel?.off('close', onClose);
    }
  }

  async function close(): Promise<void> {
    const open = [...links.values()];
    links.clear();
    await Promise.allSettled(open.map(async (pending) => (await pending).connection.close()));
  }

  return { send, close };
}

function describe(err: unknown): string {
  const e = err as Error & { code?: string | number };
  if (err instanceof DestinationError) return `refused: ${e.message}`;
  return `AMQP ${e.code ?? ''} ${e.message}`.replace(/\s+/g, ' ').trim().slice(0, 500);
}
