import ipaddr from 'ipaddr.js';

/**
 * A key's IP allowlist (API.md section 15): up to 20 IPv4 or IPv6 addresses or CIDR ranges. A
 * request from any other client address (as TRUST_PROXY says) is 403 ip_not_allowed. An
 * IPv4-mapped IPv6 address (::ffff:203.0.113.7, as a dual-stack socket reports IPv4 clients)
 * is matched as the IPv4 address it is.
 */

export const MAX_ALLOWED_IPS = 20;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Why an entry is not an address or a range; undefined when it is one. */
export function refuseEntry(entry: string): string | undefined {
  if (entry.includes('/')) {
    if (!ipaddr.isValidCIDR(entry)) return `"${entry.slice(0, 60)}" is not an IPv4 or IPv6 range in CIDR notation (such as 203.0.113.0/24 or 2001:db8::/32)`;
    return undefined;
  }
  if (!ipaddr.isValid(entry)) return `"${entry.slice(0, 60)}" is not an IPv4 or IPv6 address`;
  return undefined;
}

function rangeOf(entry: string): Range {
  if (entry.includes('/')) return ipaddr.parseCIDR(entry);
  const address = ipaddr.process(entry);
  return [address, address.kind() === 'ipv4' ? 32 : 128];
}

/** The entries as written, checked: each problem with its index (for a pointer /allowed_ips/<i>). */
export function allowlistProblems(entries: readonly string[]): Array<{ index: number; message: string }> {
  const problems: Array<{ index: number; message: string }> = [];
  entries.forEach((entry, index) => {
    const message = refuseEntry(entry);
    if (message) problems.push({ index, message });
  });
  return problems;
}

/** A test of client addresses against checked entries. */
export function allowlist(entries: readonly string[]): (address: string) => boolean {
  const ranges = entries.map(rangeOf);
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    const client = ipaddr.process(address);
    return ranges.some(([range, bits]) => range.kind() === client.kind() && client.match([range, bits] as never));
  };
}
