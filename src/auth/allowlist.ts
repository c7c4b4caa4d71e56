import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * A key's IP allowlist (docs/reference.md section 15): up to 20 IPv4 or IPv6 addresses or CIDR ranges. A
 * request from any other client address (as TRUST_PROXY says) is 403 ip_not_allowed. An
 * IPv4-mapped IPv6 address (::ffff:203.0.113.7, as a dual-stack socket reports IPv4 clients)
 * is matched as the IPv4 address it is.
 */

export const MAX_ALLOWED_IPS = 20;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

const NOT_AN_ADDRESS = 'is not an IPv4 or IPv6 address';
const NOT_A_RANGE = 'is not an IPv4 or IPv6 range in CIDR notation (such as 203.0.113.0/24 or 2001:db8::/32)';

/** An entry's address: all of it, or what comes before a range's `/`. */
const addressOf = (entry: string) => entry.split('/', 1)[0] ?? '';

/**
 * Why an entry is not an address or a range; undefined when it is one. Addresses are read as
 * Node reads them (`net.isIP`): IPv4 in four decimal parts without leading zeros, so that
 * `010.0.0.1` is refused, not taken as 8.0.0.1 (octal, as ipaddr.js and inet_aton read it),
 * nor `10.1` as 10.0.0.1. A range's address is its network's: `10.1.2.3/8`, which reads as
 * either of two things, is refused naming both.
 */
export function refuseEntry(entry: string): string | undefined {
  const shown = `"${entry.slice(0, 60)}"`;
  const slash = entry.indexOf('/');
  const address = addressOf(entry);
  if (address.includes('%')) return `${shown} names a zone (%...), which is a network interface of one host: write the address without it`;
  const family = isIP(address);
  if (family === 0 && /^[0-9a-fA-Fx.]+$/.test(address) && address.includes('.')) {
    return `${shown} ${slash === -1 ? NOT_AN_ADDRESS : NOT_A_RANGE}: write IPv4 as four decimal numbers from 0 to 255, without leading zeros (203.0.113.7)`;
  }
  if (slash === -1) return family === 0 ? `${shown} ${NOT_AN_ADDRESS}` : undefined;
  const bits = entry.slice(slash + 1);
  if (family === 0 || !/^(0|[1-9][0-9]{0,2})$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) return `${shown} ${NOT_A_RANGE}`;
  const [start, length] = ipaddr.parseCIDR(entry);
  const network = start.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(entry) : ipaddr.IPv6.networkAddressFromCIDR(entry);
  if (network.toString() !== start.toString()) return `${shown} has bits set past its /${length} prefix: write ${network.toString()}/${length} for the range, or ${start.toString()} alone for the one address`;
  return undefined;
}

function rangeOf(entry: string): Range {
  if (entry.includes('/')) {
    const [start, length] = ipaddr.parseCIDR(entry);
    // An IPv4-mapped range (::ffff:203.0.113.0/120) holds the IPv4 addresses it maps, as clients are matched.
    if (start.kind() === 'ipv6' && (start as ipaddr.IPv6).isIPv4MappedAddress() && length >= 96) return [(start as ipaddr.IPv6).toIPv4Address(), length - 96];
    return [start, length];
  }
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

/**
 * A test of client addresses against checked entries. An entry stored before addresses were read
 * strictly, whose address Node does not read (`010.0.0.1`, which ipaddr.js reads as 8.0.0.1),
 * admits nobody: the allowlist fails closed rather than admit an address nobody named.
 */
export function allowlist(entries: readonly string[]): (address: string) => boolean {
  const ranges = entries.filter((entry) => isIP(addressOf(entry)) !== 0).map(rangeOf);
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    const client = ipaddr.process(address);
    return ranges.some(([range, bits]) => range.kind() === client.kind() && client.match([range, bits] as never));
  };
}
