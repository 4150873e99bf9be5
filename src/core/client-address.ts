/**
 * Who sent a request when proxies stand in front of the server. The socket's peer is the client unless it is
 * a trusted proxy (`TRUSTED_PROXIES`); then `X-Forwarded-For` is read from the right, one hop at a time,
 * while the hop is a trusted proxy too. The first untrusted address is the client: entries to its left were
 * written by the client itself (or by proxies nobody vouches for) and are ignored, so a client cannot choose
 * the address its sign-in attempts are counted against. Pure functions: the middleware does the I/O.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

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
    const [host, bits, ...rest] = entry.split('/');
    const address = strictAddress(host);
    const max = address?.kind() === 'ipv6' ? 128 : 32;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (!address || rest.length > 0 || !(prefix >= 0 && prefix <= max)) throw new Error(`not an IP address or CIDR range: "${entry}"`);
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
