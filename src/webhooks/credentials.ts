import { transportOf } from './schemes.js';

/**
 * Credentials in a destination's URL (`https://user:pass@host/...`, sent as HTTP Basic
 * authentication; `amqp://user:pass@host/...`, `amqps://...`, `nats://user:pass@...`,
 * `tls://...`, and NATS's token form `nats://<token>@host/...`): the password, or the token, is
 * sealed at rest like a signing secret and never shown back; the subscription keeps and shows
 * its URL without it.
 */
/** A URL's user alone, without a password, is a token (NATS). */
const tokenAsUser = (url: URL) => transportOf(url.protocol) === 'nats';

/** The URL to keep and show (no password or token), and the password or token to seal, if any. */
export function splitCredentials(raw: string): { url: string; password: string | null } {
  const url = new URL(raw);
  if (transportOf(url.protocol) === undefined) return { url: raw, password: null };
  if (url.password === '') {
    if (!tokenAsUser(url) || url.username === '') return { url: raw, password: null };
    const token = decodeURIComponent(url.username);
    url.username = '';
    return { url: url.toString(), password: token };
  }
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { url: url.toString(), password };
}

/** The URL to connect to: the kept URL with its password (or, with no user, its token) put back. */
export function withPassword(url: string, password: string | null): string {
  if (password === null) return url;
  const full = new URL(url);
  if (full.username === '' && tokenAsUser(full)) full.username = encodeURIComponent(password);
  else full.password = encodeURIComponent(password);
  return full.toString();
}
