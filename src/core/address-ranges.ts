/**
 * Which IP addresses the server may be made to connect to on a user's behalf (a dataset's `source_repo`):
 * only public ones. Loopback, private, link-local, shared (CGNAT), documentation, multicast and reserved
 * ranges of IPv4 and IPv6 are not, nor IPv6 forms that carry an IPv4 address inside (IPv4-mapped and NAT64
 * addresses are judged by that address; IPv4-compatible, 6to4 and Teredo ones are refused). From the IANA
 * special-purpose address registries (RFC 6890 and its updates).
 */
import { BlockList, isIP } from 'node:net';

type Family = 'ipv4' | 'ipv6';

const NOT_PUBLIC_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network" (0.0.0.0 reaches the local host)
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const NOT_PUBLIC_V6: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], // unspecified, loopback and IPv4-compatible addresses
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['3fff::', 20], // documentation
  ['5f00::', 16], // segment routing
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

const notPublic = new BlockList();
for (const [address, prefix] of NOT_PUBLIC_V4) notPublic.addSubnet(address, prefix, 'ipv4');
for (const [address, prefix] of NOT_PUBLIC_V6) notPublic.addSubnet(address, prefix, 'ipv6');

const nat64 = new BlockList();
nat64.addSubnet('64:ff9b::', 96, 'ipv6');

function familyOf(address: string): Family | undefined {
  const v = isIP(address);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : undefined;
}

/** The IPv4 address in the last 32 bits of an IPv6 address (written in any of its forms). */
function embeddedIpv4(address: string): string {
  const groups = expandIpv6(address);
  const hi = Number.parseInt(groups[6]!, 16);
  const lo = Number.parseInt(groups[7]!, 16);
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}

/** The eight 16-bit groups of an IPv6 address, as hex text. */
function expandIpv6(address: string): string[] {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number);
    text = `${text.slice(0, -v4[1]!.length)}${((a! << 8) | b!).toString(16)}:${((c! << 8) | d!).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right];
}

/** True for an address on the public internet; false for every special range above and for what is not an address. */
export function isPublicAddress(address: string): boolean {
  const family = familyOf(address);
  if (!family) return false;
  if (family === 'ipv6' && nat64.check(address, 'ipv6')) return isPublicAddress(embeddedIpv4(address));
  // BlockList matches IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) against the IPv4 ranges.
  return !notPublic.check(address, family);
}

/** One `address/prefix` (or a lone address: /32, /128); undefined when it is not one. */
export function parseCidr(text: string): { address: string; prefix: number; family: Family } | undefined {
  const [address = '', prefixText, extra] = text.trim().split('/');
  const family = familyOf(address);
  if (!family || extra !== undefined) return undefined;
  const max = family === 'ipv4' ? 32 : 128;
  if (prefixText === undefined) return { address, prefix: max, family };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return undefined;
  return { address, prefix: Number(prefixText), family };
}

/** A test for membership in a list of CIDRs (already checked with `parseCidr`; others are ignored). */
export function addressMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  return (address) => {
    const family = familyOf(address);
    return family !== undefined && list.check(address, family);
  };
}
