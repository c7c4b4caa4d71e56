/**
 * Credentials in a broker destination's URL (`amqp://user:pass@host/...`, `amqps://...`, `nats://user:pass@...`, `tls://...`):
 * the password is sealed at rest like a signing secret and never shown back; the subscription
 * keeps and shows its URL without it. An https URL is kept as it is.
 */
const BROKERS = new Set(['amqp:', 'amqps:', 'nats:', 'tls:']);

/** The URL to keep and show (no password), and the password to seal, if any. */
export function splitCredentials(raw: string): { url: string; password: string | null } {
  const url = new URL(raw);
  if (!BROKERS.has(url.protocol) || url.password === '') return { url: raw, password: null };
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { url: url.toString(), password };
}

/** The URL to connect to: the kept URL with its password (opened) put back. */
export function withPassword(url: string, password: string | null): string {
  if (password === null) return url;
  const full = new URL(url);
  full.password = encodeURIComponent(password);
  return full.toString();
}
