import { inWords } from '../common/words.js';

/**
 * The schemes a subscription's URL may have, each with the transport that delivers to it (docs/reference.md
 * sections 8 and 16), said once for the checks of a URL, the sealing of its credentials and the
 * worker that sends. `http:` is taken only where private destinations are (development).
 */
export type Transport = 'http' | 'nats' | 'amqp';

const SCHEMES: Readonly<Record<string, Transport>> = { 'http:': 'http', 'https:': 'http', 'nats:': 'nats', 'tls:': 'nats', 'amqp:': 'amqp', 'amqps:': 'amqp' };

/** The transport of a URL's scheme (`protocol` as URL gives it, `nats:`), or undefined for one no subscription takes. */
export function transportOf(protocol: string): Transport | undefined {
  return Object.hasOwn(SCHEMES, protocol) ? SCHEMES[protocol] : undefined;
}

/** What is wrong with the URL's scheme, or undefined: https and the brokers', and http where private destinations are allowed. */
export function schemeError(url: URL, allowPrivate: boolean): string | undefined {
  if (transportOf(url.protocol) !== undefined && (url.protocol !== 'http:' || allowPrivate)) return undefined;
  const names = Object.keys(SCHEMES)
    .filter((scheme) => scheme !== 'http:' || allowPrivate)
    .map((scheme) => (scheme === 'tls:' ? 'tls (NATS over TLS)' : scheme.slice(0, -1)));
  return `must be an ${inWords(names, 'or')} URL`;
}
