/**
 * The one place that says which address a request comes from: the socket's peer, or, behind proxies listed in
 * `TRUSTED_PROXIES`, the client they name in `X-Forwarded-For` (`core/ip-addresses.ts`). Sign-in and device
 * limits, audit entries, session records and git's REMOTE_ADDR all take it from here; the limits count it by
 * `clientLimitKey` (an IPv6 client by its /64).
 */
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { clientAddress, limitKeyOf } from '../core/ip-addresses.js';
import type { AppEnv } from './app-env.js';

/** The client's address in canonical form (IPv4-mapped IPv6 as IPv4), or `unknown` when the socket has none. */
export function clientIp(c: Context<AppEnv>): string {
  let peer: string | undefined;
  try {
    peer = getConnInfo(c).remote.address;
  } catch {
    peer = undefined;
  }
  return clientAddress(peer, c.req.header('x-forwarded-for'), c.var.deps.config.trustedProxies);
}

/**
 * What every per-IP limit counts this client by (`limitKeyOf`): its IPv4 address, or the /64 of its IPv6 one,
 * which a single host may hop through one address at a time. Audit entries and REMOTE_ADDR keep `clientIp`.
 */
export function clientLimitKey(c: Context<AppEnv>): string {
  return limitKeyOf(clientIp(c));
}
