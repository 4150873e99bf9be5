/**
 * The gateway's own purge endpoint, `POST <gateway>/edge/zones/:zone/purge_cache` (docs/gateway.md): the same
 * request and answer shapes as the CDN's purge API, so a self-hosted deployment points EDGE_API_BASE at
 * `<gateway>/edge` and the callback's purge drops the gateway's cached copies. Three of the CDN's purge
 * kinds are spoken: `{"files": [URLs]}`, `{"prefixes": ["host/path"]}` and `{"purge_everything": true}`.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { constantTimeEqual } from '../core/secrets.js';
import type { Config } from '../core/config.js';
import type { Gateway } from './gateway.js';
import { gatewayRelativePath, parseObjectPath } from './gateway-path.js';

const PURGE_PATH = /^\/edge\/zones\/([^/]+)\/purge_cache$/;
const Url = z.string().max(4096);
/** The CDN takes at most 30 (or 500, by plan) a request; the gateway is lenient. */
const MAX_ITEMS = 1000;

/** One purge request; `.strict()`: a body that mixes kinds, or adds tags or hosts, is refused, not half done. */
export const PurgeBody = z.union([
  z.object({ files: z.array(z.union([Url, z.object({ url: Url })])).min(1).max(MAX_ITEMS) }).strict(),
  z.object({ prefixes: z.array(z.string().min(1).max(4096)).min(1).max(MAX_ITEMS) }).strict(),
  z.object({ purge_everything: z.literal(true) }).strict(),
]);

/** The zone named by a purge path (below the gateway base), or undefined when the path is not one. */
export function purgeZone(relative: string): string | undefined {
  const m = PURGE_PATH.exec(relative.split('?')[0]!);
  if (!m) return undefined;
  // A zone that is not valid percent-encoding is still a purge request, for a zone that is not this one.
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return m[1]!;
  }
}

export interface PurgeAnswer {
  status: number;
  body: Record<string, unknown>;
}

function refusal(status: number, code: number, message: string): PurgeAnswer {
  return { status, body: { success: false, errors: [{ code, message }], messages: [], result: null } };
}

/** A body over `limitBytes`, refused in the CDN's shape like every other answer of this endpoint. */
export function purgeBodyTooLarge(limitBytes: number): PurgeAnswer {
  return refusal(413, 1012, `the request body is larger than a purge takes (${limitBytes} bytes)`);
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

/**
 * What a CDN prefix (`host/path`, no scheme) covers among object keys, as a plain string prefix of the URL
 * (as the CDN matches it): `'everything'` when it covers the whole gateway (`host`, `host/`, or a prefix of
 * the base path or of `/zarrproxy/`), else key prefixes (`<id>/zarr/...`, decoded; possibly none). Paths
 * are read below the base, below `/zarrproxy` and as they are, like request targets (`gatewayRelativePath`).
 * The host is not checked, as for `files`: the gateway serves one zone.
 */
export function keyPrefixesOf(prefix: string, basePath: string): 'everything' | string[] {
  const slash = prefix.indexOf('/');
  const path = slash === -1 ? '' : prefix.slice(slash);
  const keys: string[] = [];
  for (const mount of new Set([basePath, '/zarrproxy', ''])) {
    const root = `${mount}/`;
    if (root.startsWith(path)) return 'everything';
    if (!path.startsWith(root)) continue;
    const key = decodePrefix(path.slice(root.length));
    if (key !== undefined) keys.push(key);
  }
  return keys;
}

/** Percent-decodes a URL prefix that may end inside an escape (`a%2`): the partial escape is dropped. */
function decodePrefix(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded.replace(/%[0-9a-fA-F]?$/, ''));
  } catch {
    return undefined;
  }
}

/** Why a body is refused, in the CDN's words where it has them (error 1012). */
function bodyProblem(body: unknown): string {
  const kinds = body !== null && typeof body === 'object' ? Object.keys(body) : [];
  if (kinds.some((k) => k === 'tags' || k === 'hosts')) return 'purging by "tags" or "hosts" is not supported by the nds gateway: use "files", "prefixes" or "purge_everything"';
  const known = kinds.filter((k) => k === 'files' || k === 'prefixes' || k === 'purge_everything');
  if (known.length === 1 && kinds.length === 1) {
    if (known[0] === 'purge_everything') return '"purge_everything" must be true';
    return `"${known[0]}" must be a list of 1 to ${MAX_ITEMS} ${known[0] === 'files' ? 'URLs (strings or {"url": ...})' : 'strings host/path'}`;
  }
  return 'Request must contain exactly one of "purge_everything": true, "files": [URLs] or "prefixes": ["host/path"]';
}

export async function handlePurge(config: Config, gateway: Gateway, zone: string, authorization: string | undefined, body: unknown): Promise<PurgeAnswer> {
  if (!config.edgeApiToken) return refusal(503, 10000, 'purging is not configured on this gateway (EDGE_API_TOKEN)');
  const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : '';
  if (!constantTimeEqual(token, config.edgeApiToken)) return refusal(401, 10000, 'Authentication error');
  if (config.edgeZoneId !== undefined && zone !== config.edgeZoneId) return refusal(404, 7003, 'No such zone');
  const parsed = PurgeBody.safeParse(body);
  if (!parsed.success) return refusal(400, 1012, bodyProblem(body));
  const request = parsed.data;
  const basePath = new URL(config.zarrCacheBaseUrl).pathname.replace(/\/+$/, '');
  if ('purge_everything' in request) {
    await gateway.dropEverything();
  } else if ('prefixes' in request) {
    if (request.prefixes.some((p) => p.includes('://') || p.includes('?') || p.includes('#'))) {
      return refusal(400, 1012, 'a prefix is host/path, without a scheme, a query or a fragment (e.g. "gw.example.org/nd000001/zarr/")');
    }
    const covered = request.prefixes.map((p) => keyPrefixesOf(p, basePath));
    if (covered.includes('everything')) await gateway.dropEverything();
    else await gateway.dropKeyPrefixes((covered as string[][]).flat());
  } else {
    await gateway.dropKeys(keysOfUrls(request.files.map((f) => (typeof f === 'string' ? f : f.url)), basePath));
  }
  return { status: 200, body: { success: true, errors: [], messages: [], result: { id: randomUUID().replaceAll('-', '') } } };
}
