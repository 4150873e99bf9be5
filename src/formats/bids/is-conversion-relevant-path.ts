/**
 * The push rule (docs/operating-zarr.md): does a change to this repository path call for a conversion? Data files (by
 * extension, or inside `.ds/` or `.mefd/` folders) and `_events.tsv` files, outside `derivatives/`,
 * `sourcedata/` and `code/`. It must accept every file the converter converts (a test keeps it so).
 */

const dataExtensions = new Set(['edf', 'bdf', 'vhdr', 'vmrk', 'eeg', 'set', 'fdt', 'fif', 'con', 'sqd', 'kdf']);
const ignoredFolders = new Set(['derivatives', 'sourcedata', 'code']);

export function isConversionRelevantPath(path: string): boolean {
  const parts = path.replaceAll('\\', '/').replace(/^\/+/, '').split('/').filter((p) => p !== '');
  if (parts.length === 0) return false;
  if (parts.slice(0, -1).some((p) => ignoredFolders.has(p)) || ignoredFolders.has(parts[0]!)) return false;
  if (parts.slice(0, -1).some((p) => /\.(ds|mefd)$/i.test(p))) return true;
  const name = parts.at(-1)!;
  if (name.endsWith('_events.tsv')) return true;
  const dot = name.lastIndexOf('.');
  return dot > 0 && dataExtensions.has(name.slice(dot + 1).toLowerCase());
}
