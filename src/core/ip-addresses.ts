/**
 * IP addresses and ranges, one owner for both of their uses:
 * - Which addresses the server may be made to connect to on a user's behalf (a dataset's `source_repo`):
 *   only public ones. Loopback, private, link-local, shared (CGNAT), documentation, multicast and reserved
 *   ranges of IPv4 and IPv6 are not, nor IPv6 forms that carry an IPv4 address inside (IPv4-mapped and NAT64
 *   addresses are judged by that address; IPv4-compatible, 6to4 and Teredo ones are refused). From the IANA
 *   special-purpose address registries (RFC 6890 and its updates).
 * - Who sent a request when proxies stand in front of the server. The socket's peer is the client unless it
 *   is a trusted proxy (`TRUSTED_PROXIES`); then `X-Forwarded-For` is read from the right, one hop at a time,
 *   while the hop is a trusted proxy too. The first untrusted address is the client: entries to its left were
 *   written by the client itself (or by proxies nobody vouches for) and are ignored, so a client cannot choose
 *   the address its sign-in attempts are counted against.
 * - What a per-IP limit counts a client by (`limitKeyOf`): an IPv6 client is given a /64 at least, so its prefix;
 *   one that stands for an IPv4 host (NAT64, 6to4 and the like), that host.
 * Both read addresses and CIDRs by the same rule (`parseCidr`). Pure functions: the middleware does the I/O.
 */
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Family = 'ipv4' | 'ipv6';
type Address = ipaddr.IPv4 | ipaddr.IPv6;

function familyOf(address: string): Family | undefined {
  const v = isIP(address);
  return v === 4 ? 'ipv4' : v === 6 ? 'ipv6' : undefined;
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

// Public addresses (source_repo)

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

// The client behind trusted proxies

/** The proxies whose `X-Forwarded-For` is believed: CIDR ranges, IPv4 and IPv6. Empty: nobody's. */
export class TrustedProxies {
  readonly #ranges: ReadonlyArray<[Address, number]>;
  /** The ranges in canonical form (`10.0.0.0/8`, `fd00::/8`), as documented and logged. */
  readonly cidrs: readonly string[];

  constructor(ranges: ReadonlyArray<[Address, number]>) {
    this.#ranges = ranges;
    this.cidrs = ranges.map(([address, bits]) => `${address.toString()}/${bits}`);
  }

  get empty(): boolean {
    return this.#ranges.length === 0;
  }

  /** Whether a canonical address (from `canonicalAddress`) lies in one of the ranges. */
  contains(address: string): boolean {
    if (this.#ranges.length === 0) return false;
    const parsed = ipaddr.parse(address);
    return this.#ranges.some((range) => parsed.kind() === range[0].kind() && parsed.match(range));
  }
}

/**
 * Parses `TRUSTED_PROXIES`: comma-separated CIDRs (`10.0.0.0/8`, `2001:db8::/32`) or single addresses
 * (`/32`, `/128`). An IPv4-mapped IPv6 range (`::ffff:10.0.0.0/104`) is read as the IPv4 range it maps.
 * Throws an `Error` naming the first entry that is not one.
 */
export function parseTrustedProxies(text: string | undefined): TrustedProxies {
  const ranges: Array<[Address, number]> = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const cidr = parseCidr(entry);
    const address = cidr && strictAddress(cidr.address);
    if (!cidr || !address) throw new Error(`not an IP address or CIDR range: "${entry}"`);
    const { prefix } = cidr;
    if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefix >= 96) {
      ranges.push([(address as ipaddr.IPv6).toIPv4Address(), prefix - 96]);
    } else {
      ranges.push([address, prefix]);
    }
  }
  return new TrustedProxies(ranges);
}

/**
 * One address in a canonical text form, or undefined when `text` is not one: dotted-quad IPv4 (no octal,
 * hex or short forms), IPv6 in RFC 5952 form (lower case, zeros compressed, no zone), an IPv4-mapped IPv6
 * address as its IPv4 address. `[v6]`, `[v6]:port` and `v4:port`, which some proxies write, are accepted.
 */
export function canonicalAddress(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const address = strictAddress(stripPort(text.trim()));
  if (!address) return undefined;
  if (address.kind() === 'ipv6') {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    v6.zoneId = undefined;
    return v6.toRFC5952String();
  }
  return address.toString();
}

/**
 * The client's address: the socket's peer (`peer`), unless that is a trusted proxy; then the rightmost
 * `X-Forwarded-For` entry that is not a trusted proxy. When every entry is trusted, the leftmost. A malformed
 * entry ends the walk at the last address seen, the trusted hop that passed it on: nothing beyond it can be
 * vouched for. A peer that is no address (a Unix socket) is `unknown`.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  let client = canonicalAddress(peer);
  if (client === undefined) return 'unknown';
  if (!trusted.contains(client) || !forwardedFor) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = canonicalAddress(hops[i]);
    if (hop === undefined) return client;
    client = hop;
    if (!trusted.contains(hop)) return hop;
  }
  return client;
}

/**
 * The key a per-IP limit counts a client by: an IPv4 address as it is; an IPv6 address as its /64
 * (`2001:db8:42:7::/64`, RFC 5952 form, zone dropped), since RFC 6177 and every provider give a host at least
 * a /64 and it may use any address in it. Forms whose host is an IPv4 address are counted by that address,
 * wherever it sits: IPv4-mapped, IPv4-translated (SIIT), NAT64 (`64:ff9b::/96`) and IPv4-compatible addresses
 * carry it in their low 32 bits, so a /64 would put every IPv4 host behind a translator in one key; a 6to4 host
 * (`2002:a.b.c.d::/48`) holds 65,536 /64s. A Teredo address (`2001:0::/32`) holds its server, not its client, in
 * its upper 64 bits: it is counted whole. Anything else (`unknown`) is returned as it is.
 */
export function limitKeyOf(address: string): string {
  const parsed = strictAddress(address.replace(/%.*$/, ''));
  if (parsed === undefined || parsed.kind() === 'ipv4') return address;
  const v6 = parsed as ipaddr.IPv6;
  const ipv4 = ipv4HostOf(v6);
  if (ipv4 !== undefined) return ipv4;
  if (v6.parts[0] === 0x2001 && v6.parts[1] === 0) return v6.toRFC5952String();
  const prefix = new ipaddr.IPv6([...v6.parts.slice(0, 4), 0, 0, 0, 0]);
  return `${prefix.toRFC5952String()}/64`;
}

/** The upper 96 bits of the IPv6 forms that carry an IPv4 host in their lower 32. */
const IPV4_IN_LOWER_32: ReadonlyArray<readonly number[]> = [
  [0, 0, 0, 0, 0, 0xffff], // IPv4-mapped
  [0, 0, 0, 0, 0xffff, 0], // IPv4-translated (SIIT, RFC 2765)
  [0x64, 0xff9b, 0, 0, 0, 0], // NAT64, the well-known prefix (RFC 6052)
];

/** The IPv4 host an IPv6 address stands for, by the forms above; undefined for any other address. */
function ipv4HostOf(v6: ipaddr.IPv6): string | undefined {
  const parts = v6.parts;
  const ipv4Of = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  if (parts[0] === 0x2002) return ipv4Of(parts[1]!, parts[2]!); // 6to4 (RFC 3056)
  if (IPV4_IN_LOWER_32.some((upper) => upper.every((part, i) => parts[i] === part))) return ipv4Of(parts[6]!, parts[7]!);
  // IPv4-compatible (::a.b.c.d, deprecated); `::` and `::1` are not, nor the rest of 0.0.0.0/8, which no host is.
  if (parts.slice(0, 6).every((part) => part === 0) && parts[6]! >> 8 !== 0) return ipv4Of(parts[6]!, parts[7]!);
  return undefined;
}

function stripPort(text: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) return bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  return v4WithPort ? v4WithPort[1] : text;
}

/** Node's own address test first: it refuses the octal, hex and short IPv4 forms that ipaddr.js reads. */
function strictAddress(text: string): Address | undefined {
  const kind = isIP(text);
  if (kind === 4) return ipaddr.IPv4.parse(text);
  if (kind === 6) return ipaddr.IPv6.parse(text);
  return undefined;
}
