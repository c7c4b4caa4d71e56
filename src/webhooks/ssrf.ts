import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard: a webhook may only reach global unicast addresses. Everything else
 * (loopback, private, link-local, carrier-grade NAT, multicast, broadcast, unspecified,
 * documentation and other reserved ranges, unique-local, NAT64, 6to4, Teredo) is refused,
 * and an IPv4-mapped IPv6 address is judged as the IPv4 address it carries. The deprecated
 * IPv4-compatible block `::/96` (`::127.0.0.1`, `::a9fe:a9fe`) is refused whole: ipaddr.js
 * calls it unicast, but some stacks route it to the IPv4 address inside.
 */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number];

export function forbiddenRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid';
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range === 'unicast' && parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return range === 'unicast' ? undefined : range;
}

/** Each refused range as a person reads it, for the refusal's message. */
const RANGE_WORDS: Record<string, string> = {
  invalid: 'not an IP address',
  unspecified: 'the unspecified address (0.0.0.0 or ::, "any")',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (169.254.0.0/16 or fe80::/10, cloud metadata among them)',
  loopback: 'a loopback address (this very machine)',
  carrierGradeNat: "a carrier-grade NAT address (100.64.0.0/10, inside a provider's network)",
  private: 'a private network address (10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16)',
  reserved: 'a reserved address (documentation, benchmarking or future use)',
  uniqueLocal: 'a unique local IPv6 address (fc00::/7, a private network)',
  deprecatedSiteLocal: 'a site-local IPv6 address (fec0::/10, a private network)',
  ipv4Compatible: 'an IPv4-compatible IPv6 address (::/96, deprecated: some systems reach the IPv4 address inside it)',
  rfc6145: 'an IPv4-translated IPv6 address (::ffff:0:0/96, an IPv4 address inside IPv6)',
  rfc6052: 'a NAT64 address (64:ff9b::/96, an IPv4 address inside IPv6)',
  '6to4': 'a 6to4 address (2002::/16, an IPv4 address inside IPv6)',
  teredo: 'a Teredo tunnel address (2001::/32)',
  discard: 'a discard-only IPv6 address (100::/64)',
  benchmarking: 'an address reserved for benchmarking',
  as112: 'an address reserved for AS112 DNS servers',
  as112v6: 'an address reserved for AS112 DNS servers',
  amt: 'an address reserved for multicast tunnels (AMT)',
  deprecatedOrchid: 'an ORCHID identifier, not a host address',
  orchid2: 'an ORCHID identifier, not a host address',
  droneRemoteIdProtocolEntityTags: 'an address reserved for drone identifiers',
  segmentRouting: 'an address reserved for segment routing (5f00::/16)',
};

/** A refused range in words, e.g. "a loopback address (this very machine)". */
export const describeRange = (range: string) => RANGE_WORDS[range] ?? `an address of a reserved kind (${range})`;

export class DestinationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DestinationError';
  }
}

/** Resolves a host name to every address it has (IPv4 and IPv6). */
export type Resolve = (host: string) => Promise<string[]>;

/** The system resolver, or (WEBHOOK_DNS_SERVERS) a resolver asking those servers only. */
export function createResolve(servers: readonly string[]): Resolve {
  if (servers.length === 0) {
    return async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  }
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([...servers]);
  const quiet = (p: Promise<string[]>) => p.catch((err: NodeJS.ErrnoException) => (err.code === 'ENODATA' || err.code === 'ENOTFOUND' ? [] : Promise.reject(err)));
  return async (host) => {
    const [v4, v6] = await Promise.all([quiet(resolver.resolve4(host)), quiet(resolver.resolve6(host))]);
    return [...v4, ...v6];
  };
}

/** A URL's host without the brackets of an IPv6 literal (`[::1]` -> `::1`). */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Resolves a host (a name, or an address that needs no resolving) and checks every address;
 * returns the addresses, in the resolver's order, or throws a DestinationError saying why.
 * With `allowPrivate`, only resolution counts.
 */
export async function checkHost(host: string, resolve: Resolve, allowPrivate: boolean): Promise<string[]> {
  let addresses: string[];
  if (net.isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new DestinationError(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (addresses.length === 0) throw new DestinationError(`${host} does not resolve`);
  }
  if (!allowPrivate) {
    for (const address of addresses) {
      const range = forbiddenRange(address);
      if (range) throw new DestinationError(`${host} ${address === host ? 'is' : `resolves to ${address}, which is`} ${describeRange(range)}; webhooks reach public addresses only`);
    }
  }
  return addresses;
}
