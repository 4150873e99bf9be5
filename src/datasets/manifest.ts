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
 * A segment that git takes for its own folder somewhere: `.git` in any case, with the trailing dots or spaces
 * Windows drops, or the folder's 8.3 short name. A file written there by a download into a working tree
 * would be git's configuration (`core.fsmonitor` runs a command).
 */
const GIT_FOLDER = /^(\.git[. ]*|git~\d+)$/i;

/**
 * Why a manifest path is unsafe, or `undefined` when it is a plain relative path. Clients writing files
 * from a manifest use the same rule, so no entry can escape the folder it is written into, nor write into
 * a git folder there.
 */
export function unsafePathReason(p: string): string | undefined {
  if (p.length === 0 || p.length > 1024) return 'empty or longer than 1024 characters';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'absolute';
  if (p.includes('\\') || p.includes('\0')) return 'contains a backslash or NUL';
  const segments = p.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return 'has an empty, "." or ".." segment';
  if (segments.some((s) => GIT_FOLDER.test(s))) return 'inside a .git folder';
  return undefined;
}

/** A path as a file system that ignores case and Unicode form sees it (macOS, Windows). */
function folded(p: string): string {
  return p.normalize('NFC').toLowerCase();
}

/**
 * The paths of a list that cannot all be files of one folder: two that differ only in case or Unicode form
 * (one would replace the other on macOS or Windows), and a file that is also another's folder (`a` and
 * `a/b`). Paths listed twice exactly are left to the caller. At most `limit` problems.
 */
export function pathConflicts(paths: Iterable<string>, limit = 50): string[] {
  const problems: string[] = [];
  const files = new Map<string, string>();
  const folders = new Map<string, string>();
  for (const p of paths) {
    const key = folded(p);
    const other = files.get(key);
    if (other === undefined) files.set(key, p);
    else if (other !== p) problems.push(`${JSON.stringify(p)}: differs from ${JSON.stringify(other)} only in case or Unicode form`);
    for (let at = key.indexOf('/'); at !== -1; at = key.indexOf('/', at + 1)) {
      const folder = key.slice(0, at);
      if (!folders.has(folder)) folders.set(folder, p);
    }
    if (problems.length >= limit) return problems;
  }
  for (const [key, p] of files) {
    const inside = folders.get(key);
    if (inside !== undefined) problems.push(`${JSON.stringify(p)}: a file, and the folder of ${JSON.stringify(inside)}`);
    if (problems.length >= limit) break;
  }
  return problems;
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
  if (problems.length === 0) problems.push(...pathConflicts(entries.map((e) => e.path)));
  if (problems.length) throw new NdsError('validation_failed', { message: 'The manifest is not valid.', details: problems });
  return entries.map((e) => ({ path: e.path, size: e.size, sha256: e.sha256 })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The stored bytes of a manifest: a JSON array, one entry a line. */
export function serializeManifest(entries: ManifestEntry[]): Buffer {
  return Buffer.from(entries.length === 0 ? '[]\n' : `[\n${entries.map((e) => JSON.stringify(e)).join(',\n')}\n]\n`);
}
