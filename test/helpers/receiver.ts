import http from 'node:http';
import type { AddressInfo } from 'node:net';
import nacl from 'tweetnacl';
import { Webhook } from 'standardwebhooks';
import { waitFor } from './app.js';
import type { Contract } from './contract.js';

/** One request a receiver got. */
export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  id: string;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer only after this long. */
  delayMs?: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /**
   * The secrets each path's deliveries are signed with. Every request is verified on arrival
   * with the standardwebhooks package against its path's secrets; one that verifies with none
   * (or comes to a path with none) lands in `rejected`.
   */
  secrets: Map<string, string[]>;
  rejected: Array<{ path: string; id: string; reason: string }>;
  /** When set, every request is also held to the document's `webhooks` entry for its event type; a mismatch lands in `rejected`. */
  contract?: Contract;
  /** Decides each answer; by default 200 at once. `n` counts this receiver's requests from 0. */
  respond: (request: Received, n: number) => Reply;
  /** Resolves once `count` requests matched `filter`. */
  waitFor(count: number, filter?: (r: Received) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A real HTTP server on loopback that records what webhook deliveries it gets. */
export async function startReceiver(respond: Receiver['respond'] = () => ({})): Promise<Receiver> {
  const received: Received[] = [];
  const receiver = { received, respond, secrets: new Map<string, string[]>(), rejected: [] } as unknown as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { at: Date.now(), path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), id: String(req.headers['webhook-id'] ?? '') };
      const n = received.length;
      received.push(r);
      const secrets = receiver.secrets.get(r.path) ?? [];
      const reasons = secrets.map((secret) => {
        try {
          verified(secret, r);
          return undefined;
        } catch (err) {
          return (err as Error).message;
        }
      });
      if (!reasons.includes(undefined)) receiver.rejected.push({ path: r.path, id: r.id, reason: reasons.join('; ') || 'no secret registered for this path' });
      try {
        receiver.contract?.checkDelivery(r.headers, r.body);
      } catch (err) {
        receiver.rejected.push({ path: r.path, id: r.id, reason: (err as Error).message });
      }
      const reply = receiver.respond(r, n);
      const answer = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, reply.headers ?? {});
        res.end(reply.body ?? 'ok');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.waitFor = async (count, filter = () => true, timeoutMs = 15_000) => {
    await waitFor(() => received.filter(filter).length >= count, timeoutMs, `${count} deliveries at ${receiver.url}`);
    return received.filter(filter);
  };
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/**
 * Checks a delivery with the standardwebhooks package (an implementation we did not write):
 * returns the parsed event, or throws if the signature does not verify.
 */
export function verified(secret: string, r: Received): { id: string; type: string; created_at: string; data: { object: Record<string, unknown>; previous: Record<string, unknown> } } {
  if (secret.startsWith('whpk_')) return verifiedEd25519(secret, r) as ReturnType<typeof verified>;
  const headers = { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) };
  return new Webhook(secret).verify(r.body, headers) as ReturnType<typeof verified>;
}

/**
 * Checks an Ed25519 delivery (Standard Webhooks `v1a,`) with tweetnacl (an implementation we did
 * not write) against a `whpk_` public key: one of the header's v1a signatures must verify
 * `<webhook-id>.<webhook-timestamp>.<body>`, and the timestamp be within 5 minutes. Returns the
 * parsed event, or throws.
 */
export function verifiedEd25519(publicKey: string, r: Received): unknown {
  const key = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const id = String(r.headers['webhook-id']);
  const timestamp = String(r.headers['webhook-timestamp']);
  if (Math.abs(Number(timestamp) - Date.now() / 1000) > 300) throw new Error('webhook-timestamp is not within 5 minutes');
  const content = new TextEncoder().encode(`${id}.${timestamp}.${r.body}`);
  const signatures = String(r.headers['webhook-signature']).split(' ').filter((s) => s.startsWith('v1a,')).map((s) => Buffer.from(s.slice(4), 'base64'));
  if (signatures.length === 0) throw new Error('no v1a signature');
  if (!signatures.some((signature) => nacl.sign.detached.verify(content, signature, key))) throw new Error('no v1a signature verifies with the public key');
  return JSON.parse(r.body);
}

/** A delivery as `GET /v1/webhooks/{id}/deliveries` lists it (the fields the tests read). */
export type ListedDelivery = { id: string; event_id: string; status: string; attempts: number; last_error: string | null };

/** A subscription's deliveries, newest first, through the public API (`query` such as `?limit=200`). */
export async function deliveriesOf(app: { request(path: string, init: { token: string }): Promise<Response> }, token: string, subscriptionId: string, query = ''): Promise<ListedDelivery[]> {
  return ((await (await app.request(`/v1/webhooks/${subscriptionId}/deliveries${query}`, { token })).json()) as { data: ListedDelivery[] }).data;
}
