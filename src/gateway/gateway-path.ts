/**
 * Path rules of the browser gateway (docs/gateway.md), as pure functions over the raw request target, so
 * that `..`, `%2e%2e` and friends are judged before anything (a URL parser, a router) normalises them away.
 */
import { objectKeyProblem } from '../objects/object-store.js';

/** A gateway request target that names one object of a dataset's Zarr copy. */
export interface ObjectPath {
  datasetId: string;
  /** Path inside `<id>/zarr/`, decoded, e.g. `sub-01/eeg/sub-01_eeg.zarr/zarr.json`. */
  path: string;
  /** The object store key, `<id>/zarr/<path>`. */
  key: string;
}

export type PathVerdict = { ok: true; object: ObjectPath } | { ok: false; status: 400 | 404; reason: string };

export const DATASET_ID = /^(nd|sb)\d{6}$/;

/**
 * The part of a raw request target (`/zarrproxy/nd000001/zarr/x?q`) below the gateway's base: the query is
 * dropped, then `/zarrproxy` (the API host's mount) or else the base path of ZARR_CACHE_BASE_URL is removed.
 * Dataset ids never start with `zarrproxy`, so the two prefixes cannot be confused with a dataset path.
 */
export function gatewayRelativePath(target: string, basePath: string): string {
  const q = target.indexOf('?');
  let p = q === -1 ? target : target.slice(0, q);
  if (p.startsWith('/zarrproxy/') || p === '/zarrproxy') p = p.slice('/zarrproxy'.length);
  else if (basePath && basePath !== '/' && (p.startsWith(`${basePath}/`) || p === basePath)) p = p.slice(basePath.length);
  return p;
}

/**
 * Judges a path below the gateway base, e.g. `/nd000001/zarr/a/zarr.json` (still percent-encoded).
 * 400 for `..`, `.`, an empty segment, a backslash, a NUL (raw or percent-encoded), an encoded `/`, malformed
 * percent-encoding, or an invalid dataset id; 404 for a well-formed path outside `<id>/zarr/` or longer than
 * any object key (a segment past 255 bytes, the key past 1024).
 */
export function parseObjectPath(relative: string): PathVerdict {
  if (!relative.startsWith('/')) return bad('the path must start with /');
  const raw = relative.slice(1).split('/');
  const segments: string[] = [];
  for (const s of raw) {
    let d: string;
    try {
      d = decodeURIComponent(s);
    } catch {
      return bad('malformed percent-encoding');
    }
    if (d === '' || d === '.' || d === '..') return bad('empty, . or .. segment');
    if (d.includes('/') || d.includes('\\') || d.includes('\0')) return bad('slash, backslash or NUL inside a segment');
    segments.push(d);
  }
  if (!DATASET_ID.test(segments[0]!)) return bad('invalid dataset id');
  if (segments[1] !== 'zarr') return { ok: false, status: 404, reason: 'only <id>/zarr/ is served' };
  if (segments.length < 3) return bad('no object path after zarr/');
  const path = segments.slice(2).join('/');
  const key = `${segments[0]}/zarr/${path}`;
  // Well formed, but longer than any store holds (a segment past 255 bytes, the key past 1024): no such object.
  const problem = objectKeyProblem(key);
  if (problem) return { ok: false, status: 404, reason: problem };
  return { ok: true, object: { datasetId: segments[0]!, path, key } };
}

function bad(reason: string): PathVerdict {
  return { ok: false, status: 400, reason };
}

/** `application/json` for Zarr metadata and the index; everything else is an opaque chunk. */
export function isMetadataPath(path: string): boolean {
  return path === 'index.json' || path.endsWith('/zarr.json') || path === 'zarr.json';
}
