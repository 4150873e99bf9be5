import { Hono } from 'hono';
import type { Config } from '../config.js';
import type { Deps } from '../deps.js';

/** The browser gateway for Zarr data (issue 5): a self-contained app, also run alone by `nds gateway`. */
export function gatewayRoutes(_deps: Deps): Hono {
  return new Hono();
}

/** True when a request's Host is the gateway's own host name and that differs from the API's. */
export function isGatewayHost(config: Config, host: string | undefined): boolean {
  if (!host) return false;
  const gatewayHost = new URL(config.zarrCacheBaseUrl).host;
  return gatewayHost !== new URL(config.publicUrl).host && host.toLowerCase() === gatewayHost.toLowerCase();
}
