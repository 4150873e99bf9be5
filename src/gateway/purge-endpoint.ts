/**
 * The gateway's own purge endpoint, `POST <gateway>/edge/zones/:zone/purge_cache` (CONTRACT §6.4): the same
 * request and answer shapes as the CDN's purge API, so a self-hosted deployment points EDGE_API_BASE at
 * `<gateway>/edge` and the callback's purge drops the gateway's cached copies.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { constantTimeEqual } from '../accounts/secrets.js';
import type { Config } from '../config.js';
import type { Gateway } from './gateway.js';
import { gatewayRelativePath, parseObjectPath } from './gateway-path.js';

const PURGE_PATH = /^\/edge\/zones\/([^/]+)\/purge_cache$/;

export const PurgeBody = z.object({
  files: z.array(z.union([z.string().max(4096), z.object({ url: z.string().max(4096) })])).min(1).max(1000),
});

/** The zone named by a purge path (below the gateway base), or undefined when the path is not one. */
export function purgeZone(relative: string): string | undefined {
  const m = PURGE_PATH.exec(relative.split('?')[0]!);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

export interface PurgeAnswer {
  status: number;
  body: Record<string, unknown>;
}

function refusal(status: number, code: number, message: string): PurgeAnswer {
  return { status, body: { success: false, errors: [{ code, message }], messages: [], result: null } };
}

/** The object keys that absolute gateway URLs name; URLs of other shapes are ignored, as a CDN would. */
export function keysOfUrls(urls: string[], basePath: string): string[] {
  const keys: string[] = [];
  for (const u of urls) {
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      continue;
    }
    const verdict = parseObjectPath(gatewayRelativePath(url.pathname, basePath));
    if (verdict.ok) keys.push(verdict.object.key);
  }
  return keys;
}

export async function handlePurge(config: Config, gateway: Gateway, zone: string, authorization: string | undefined, body: unknown): Promise<PurgeAnswer> {
  if (!config.edgeApiToken) return refusal(503, 10000, 'purging is not configured on this gateway (EDGE_API_TOKEN)');
  const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : '';
  if (!constantTimeEqual(token, config.edgeApiToken)) return refusal(401, 10000, 'Authentication error');
  if (config.edgeZoneId !== undefined && zone !== config.edgeZoneId) return refusal(404, 7003, 'No such zone');
  const parsed = PurgeBody.safeParse(body);
  if (!parsed.success) return refusal(400, 1012, 'expected {"files": [absolute URLs]}');
  const urls = parsed.data.files.map((f) => (typeof f === 'string' ? f : f.url));
  await gateway.dropKeys(keysOfUrls(urls, new URL(config.zarrCacheBaseUrl).pathname.replace(/\/+$/, '')));
  return { status: 200, body: { success: true, errors: [], messages: [], result: { id: randomUUID().replaceAll('-', '') } } };
}
