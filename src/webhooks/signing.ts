import { LRUCache } from 'lru-cache';
import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign as signWith, type KeyObject } from 'node:crypto';

/**
 * Standard Webhooks signatures, of `<id>.<timestamp>.<body>`, by a subscription's kind:
 * - `hmac` (the default): a secret `whsec_` + base64 of 32 random bytes, and `v1,<base64
 *   HMAC-SHA256>`, keyed with the decoded secret;
 * - `ed25519`: a private key `whsk_` + base64 of its 32-byte seed, kept sealed like a secret
 *   and never shown, and `v1a,<base64 Ed25519 signature>`; receivers verify with the public
 *   key `whpk_` + base64 of its 32 bytes, which the subscription shows (docs/reference.md section 16).
 */
export const SIGNATURES = ['hmac', 'ed25519'] as const;
export type SignatureKind = (typeof SIGNATURES)[number];

const HMAC = 'whsec_';
const PRIVATE = 'whsk_';
const PUBLIC = 'whpk_';
/** DER around an Ed25519 seed (PKCS#8) and a public key (SPKI): RFC 8410. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX_LENGTH = 12;

/** A new signing secret of the kind: an HMAC secret, or an Ed25519 private key. */
export function newSecret(kind: SignatureKind = 'hmac'): string {
  if (kind === 'hmac') return `${HMAC}${randomBytes(32).toString('base64')}`;
  const { privateKey } = generateKeyPairSync('ed25519');
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  return `${PRIVATE}${der.subarray(der.length - 32).toString('base64')}`;
}

/** Opened private keys by their text: parsing one costs more than the signature. */
const keys = new LRUCache<string, KeyObject>({ max: 1000 });

function privateKeyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, Buffer.from(secret.slice(PRIVATE.length), 'base64')]), format: 'der', type: 'pkcs8' });
    keys.set(secret, key);
  }
  return key;
}

/** The public key that verifies a private key's signatures (`whpk_...`); null for an HMAC secret, which has none. */
export function publicKeyOf(secret: string): string | null {
  if (!secret.startsWith(PRIVATE)) return null;
  const der = createPublicKey(privateKeyOf(secret)).export({ format: 'der', type: 'spki' });
  return `${PUBLIC}${der.subarray(SPKI_PREFIX_LENGTH).toString('base64')}`;
}

/** One signature of `<id>.<timestamp>.<body>`: `v1,` with an HMAC secret, `v1a,` with an Ed25519 key. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const content = `${id}.${timestamp}.${body}`;
  if (secret.startsWith(PRIVATE)) return `v1a,${signWith(null, Buffer.from(content), privateKeyOf(secret)).toString('base64')}`;
  const key = Buffer.from(secret.slice(HMAC.length), 'base64');
  return `v1,${createHmac('sha256', key).update(content).digest('base64')}`;
}

/** The signature header value: one signature per live secret, space-separated (rotation). */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestamp, body)).join(' ');
}

/** The Standard Webhooks headers of one attempt of `message`, every sender's: signed now, in wall time (receivers compare it with their own clock, whatever clock schedules attempts). */
export function signedHeaders(message: { secrets: readonly string[]; eventId: string; body: string }): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  const timestamp = Math.floor(Date.now() / 1000);
  return { 'webhook-id': message.eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(message.secrets, message.eventId, timestamp, message.body) };
}
