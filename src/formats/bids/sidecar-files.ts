/**
 * Finds the metadata files that apply to a data file under the BIDS inheritance principle: same level or
 * higher, same suffix, and no entity the data file lacks (or has with another value). For TSVs only the
 * lowest applicable file is used; JSON files merge top-down, lower levels overriding.
 */
import { readdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { parseBidsName } from './bids-name.js';

export type DirectoryLister = (relativeDir: string) => Promise<string[]>;

/** Applicable files for `suffix` + `extension`, ordered from the top of the tree to the data file's folder. */
export async function applicableFiles(list: DirectoryLister, dataPath: string, suffix: string, extension: string, ignoredEntities: readonly string[] = []): Promise<string[]> {
  const data = parseBidsName(posix.basename(dataPath));
  if (!data) return [];
  const parts = posix.dirname(dataPath).split('/').filter((p) => p !== '.' && p !== '');
  const found: { path: string; depth: number; entities: number }[] = [];
  for (let depth = 0; depth <= parts.length; depth++) {
    const dir = parts.slice(0, depth).join('/');
    for (const name of await list(dir)) {
      const candidate = parseBidsName(name);
      if (!candidate || candidate.suffix !== suffix || candidate.extension !== extension) continue;
      const applies = [...candidate.entities].every(([key, value]) => ignoredEntities.includes(key) || data.entities.get(key) === value);
      if (applies) found.push({ path: dir ? `${dir}/${name}` : name, depth, entities: candidate.entities.size });
    }
  }
  found.sort((a, b) => a.depth - b.depth || a.entities - b.entities || a.path.localeCompare(b.path));
  return found.map((f) => f.path);
}

/** A lister over a real folder, caching each directory. */
export function folderLister(root: string): DirectoryLister {
  const cache = new Map<string, Promise<string[]>>();
  return (dir) => {
    let names = cache.get(dir);
    if (!names) {
      names = readdir(posix.join(root, dir), { withFileTypes: true })
        .then((entries) => entries.filter((e) => e.isFile()).map((e) => e.name).sort())
        .catch(() => []);
      cache.set(dir, names);
    }
    return names;
  };
}
