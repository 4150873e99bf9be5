/**
 * The one place that says which address a request comes from: the socket's peer, or, behind proxies listed in
 * `TRUSTED_PROXIES`, the client they name in `X-Forwarded-For` (`core/ip-addresses.ts`). Sign-in and device
 * limits, audit entries, session records and git's REMOTE_ADDR all take it from here.
 */
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { clientAddress } from '../core/ip-addresses.js';
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
