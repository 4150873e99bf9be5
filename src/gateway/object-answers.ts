/**
 * The answers of the gateway, as plain values (status, headers, body) that any HTTP layer can write:
 * header sets are built once per cached object, and error bodies once per process.
 */
import type { Readable } from 'node:stream';
import type { ObjectInfo } from '../objects/object-store.js';
import { errorSpec, type ErrorCode } from '../http/errors.js';
import { isMetadataPath } from './gateway-path.js';

export interface GatewayAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: Buffer | Readable | null;
}

export type CacheVerdict = 'HIT' | 'MISS' | 'BYPASS';

/** CONTRACT §6.2.5: metadata may change with each conversion; chunks of a store change rarely. */
export function cachePolicy(path: string): { cacheControl: string; ttlMs: number; contentType: string } {
  return isMetadataPath(path)
    ? { cacheControl: 'public, max-age=60', ttlMs: 60_000, contentType: 'application/json' }
    : { cacheControl: 'public, max-age=86400', ttlMs: 86_400_000, contentType: 'application/octet-stream' };
}

/** Headers of a full 200 answer for an object (no CORS, no X-Cache: those depend on the request). */
export function objectHeaders(info: ObjectInfo, path: string): Record<string, string> {
  const policy = cachePolicy(path);
  return {
    'content-type': policy.contentType,
    'content-length': String(info.size),
    etag: info.etag,
    'last-modified': info.lastModified.toUTCString(),
    'cache-control': policy.cacheControl,
    'accept-ranges': 'bytes',
  };
}

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison, over a list or `*`. */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const bare = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const candidate of ifNoneMatch.split(',')) {
    const c = candidate.trim();
    if ((c.startsWith('W/') ? c.slice(2) : c) === bare) return true;
  }
  return false;
}

const errorBodies = new Map<string, Buffer>();

/** A JSON error answer in the general shape of the API (`{error, message, details}`). */
export function errorAnswer(code: ErrorCode, headers: Record<string, string>, details: string[] = []): GatewayAnswer {
  const spec = errorSpec(code);
  const memo = details.length === 0 ? code : undefined;
  let body = memo ? errorBodies.get(memo) : undefined;
  if (!body) {
    body = Buffer.from(JSON.stringify({ error: code, message: spec.message, details }));
    if (memo) errorBodies.set(memo, body);
  }
  return {
    status: spec.status,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
    body,
  };
}
