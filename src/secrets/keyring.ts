import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (webhook signing secrets): AES-256-GCM under the keys of SECRET_KEYS, newest
 * first. A sealed value reads `enc:v1:<key id>:<base64url(iv | ciphertext | tag)>`; the key id
 * (8 hex digits of the key's SHA-256) says which key opens it, so older keys still open what
 * they sealed until `admin secrets re-encrypt` has moved everything to the newest. The row's id
 * is bound as associated data: a sealed secret copied onto another row does not open there.
 */
export interface Keyring {
  /** The key that seals: the first of SECRET_KEYS. */
  readonly newestId: string;
  readonly ids: readonly string[];
  seal(plain: string, rowId: string): string;
  /** The secret in clear; throws SealError for a value no key of the ring opens. */
  open(sealed: string, rowId: string): string;
  /** The id of the key that sealed `value`; undefined for a value that is not sealed. */
  keyIdOf(value: string): string | undefined;
}

export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A key's id: 8 hex digits of its SHA-256 (says which key, reveals nothing of it). */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** A new key for SECRET_KEYS or the embedded key file, base64 (as `openssl rand -base64 32` prints). */
export function newKey(): string {
  return randomBytes(32).toString('base64');
}

export function createKeyring(keys: readonly Buffer[]): Keyring {
  if (keys.length === 0) throw new Error('a keyring needs at least one key');
  const byId = new Map(keys.map((key) => [keyId(key), key] as const));
  const newestId = keyId(keys[0]!);
  const newest = keys[0]!;

  const keyIdOf = (value: string): string | undefined => {
    if (!value.startsWith(PREFIX)) return undefined;
    const end = value.indexOf(':', PREFIX.length);
    return end > 0 ? value.slice(PREFIX.length, end) : undefined;
  };

  return Object.freeze({
    newestId,
    ids: Object.freeze([...byId.keys()]),
    keyIdOf,
    seal(plain: string, rowId: string): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', newest, iv);
      cipher.setAAD(Buffer.from(rowId, 'utf8'));
      const body = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}${newestId}:${body.toString('base64url')}`;
    },
    open(sealed: string, rowId: string): string {
      const id = keyIdOf(sealed);
      if (id === undefined) throw new SealError('the value is not sealed (enc:v1:...)');
      const key = byId.get(id);
      if (!key) throw new SealError(`the value is sealed under key ${id}, which SECRET_KEYS does not hold`);
      const body = Buffer.from(sealed.slice(PREFIX.length + id.length + 1), 'base64url');
      if (body.length < IV_BYTES + TAG_BYTES) throw new SealError('the sealed value is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(rowId, 'utf8'));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(body.subarray(IV_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SealError(`the sealed value does not open under key ${id} (altered, or sealed for another row)`);
      }
    },
  });
}
