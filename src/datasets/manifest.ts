/**
 * A version's manifest: every file `{path, size, sha256}`, sorted by path, stored at
 * `<id>/versions/<version>/manifest.json`; content lives at `<id>/objects/<sha256>`.
 */
import { NdsError } from '../core/errors.js';

export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;

export function contentKey(datasetId: string, sha256: string): string {
  return `${datasetId}/objects/${sha256}`;
}

export function manifestKey(datasetId: string, version: string): string {
  return `${datasetId}/versions/${version}/manifest.json`;
}

/**
 * Why a manifest path is unsafe, or `undefined` when it is a plain relative path. Clients writing files
 * from a manifest use the same rule, so no entry can escape the folder it is written into.
 */
export function unsafePathReason(p: string): string | undefined {
  if (p.length === 0 || p.length > 1024) return 'empty or longer than 1024 characters';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'absolute';
  if (p.includes('\\') || p.includes('\0')) return 'contains a backslash or NUL';
  if (p.split('/').some((s) => s === '' || s === '.' || s === '..')) return 'has an empty, "." or ".." segment';
  return undefined;
}

/** Checks every entry and sorts by path; throws `validation_failed` listing each problem. */
export function normalizeManifest(entries: ManifestEntry[]): ManifestEntry[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    const why = unsafePathReason(e.path);
    if (why) problems.push(`${JSON.stringify(e.path)}: path is ${why}`);
    if (seen.has(e.path)) problems.push(`${JSON.stringify(e.path)}: listed twice`);
    seen.add(e.path);
    if (!Number.isSafeInteger(e.size) || e.size < 0) problems.push(`${JSON.stringify(e.path)}: size must be a whole number ≥ 0`);
    if (!SHA256_HEX.test(e.sha256)) problems.push(`${JSON.stringify(e.path)}: sha256 must be 64 lower-case hex digits`);
    if (problems.length >= 50) break;
  }
  if (problems.length) throw new NdsError('validation_failed', { message: 'The manifest is not valid.', details: problems });
  return entries.map((e) => ({ path: e.path, size: e.size, sha256: e.sha256 })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The stored bytes of a manifest: a JSON array, one entry a line. */
export function serializeManifest(entries: ManifestEntry[]): Buffer {
  return Buffer.from(entries.length === 0 ? '[]\n' : `[\n${entries.map((e) => JSON.stringify(e)).join(',\n')}\n]\n`);
}
