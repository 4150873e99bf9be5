/**
 * The answers of the gateway, as plain values (status, headers, body) that any HTTP layer can write:
 * header lists are built once per cached object and per origin, and error bodies once per process.
 */
import type { Readable } from 'node:stream';
import type { ObjectInfo } from '../objects/object-store.js';
import { errorSpec, type ErrorCode } from '../core/errors.js';
import { isMetadataPath } from './gateway-path.js';

/**
 * Header fields as a flat list, `[name, value, name, value, ...]`, lower-case names: the form node:http's
 * `writeHead` takes without walking an object's keys (measured: bench/RESULTS.md).
 */
export type HeaderList = readonly string[];

export interface GatewayAnswer {
  status: number;
  headers: HeaderList;
  body: Buffer | Readable | null;
}

export type CacheVerdict = 'HIT' | 'MISS' | 'BYPASS';

/** docs/gateway.md: metadata may change with each conversion; chunks of a store change rarely. */
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
    // A stored object is read as the type given here, never sniffed as something a browser would run.
    'x-content-type-options': 'nosniff',
  };
}

/** A record's fields as a list, leaving out the names in `omit`. */
export function headerList(record: Readonly<Record<string, string>>, omit?: string): string[] {
  const list: string[] = [];
  for (const name of Object.keys(record)) if (name !== omit) list.push(name, record[name]!);
  return list;
}

/** A list as a record (for hono's Response, whose plain-object headers take its direct path). */
export function headerRecord(list: HeaderList): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i < list.length; i += 2) record[list[i]!] = list[i + 1]!;
  return record;
}

/** The value of a header in a list, or undefined. */
export function headerValue(list: HeaderList, name: string): string | undefined {
  for (let i = 0; i < list.length; i += 2) if (list[i] === name) return list[i + 1];
  return undefined;
}

/** RFC 9110 section 13.1.2: If-None-Match uses the weak comparison, over a list or `*`. */
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
export function errorAnswer(code: ErrorCode, headers: HeaderList, details: string[] = []): GatewayAnswer {
  const spec = errorSpec(code);
  const memo = details.length === 0 ? code : undefined;
  let body = memo ? errorBodies.get(memo) : undefined;
  if (!body) {
    body = Buffer.from(JSON.stringify({ error: code, message: spec.message, details }));
    if (memo) errorBodies.set(memo, body);
  }
  return { status: spec.status, headers: [...headers, 'content-type', 'application/json', 'x-content-type-options', 'nosniff', 'content-length', String(body.length)], body };
}
