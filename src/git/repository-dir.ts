import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** The bare repository folder of a dataset under `GIT_DIR_ROOT`. */
export function repositoryDir(gitDir: string, datasetId: string): string {
  return path.join(gitDir, `${datasetId}.git`);
}

/**
 * The bytes a bare repository keeps on disk: the sizes of its regular files (packs, loose objects, refs) and
 * the space its folders take (a loose ref deep in folders costs a folder a level: its size says nothing of
 * them), links not followed. A pushed pack is kept as it came (`receive.unpackLimit` 1), so the files are few. What
 * a push still has in quarantine (`objects/incoming-*`, `tmp_*`) is not counted: it is kept only if the push
 * succeeds, and is counted then; a refused push's can still be on disk when its request has ended.
 */
export async function repositoryBytes(dir: string, options: { arriving?: boolean } = {}): Promise<number> {
  let total = 0;
  const walk = async (folder: string): Promise<void> => {
    for (const entry of await unlessGone(readdir(folder, { withFileTypes: true }), [])) {
      // With `arriving`, also what a fetch or push under way is writing (its quarantine, its temporary pack).
      if (!options.arriving && (entry.name.startsWith('incoming-') || entry.name.startsWith('tmp_'))) continue;
      const at = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        total += await unlessGone(lstat(at).then((stats) => stats.blocks * 512), 0);
        await walk(at);
      } else if (entry.isFile()) total += await unlessGone(lstat(at).then((stats) => stats.size), 0);
    }
  };
  await walk(dir);
  return total;
}

/** What `work` reads, or `gone` for a file or folder removed while the repository was walked (git's own clean-up). */
async function unlessGone<T>(work: Promise<T>, gone: T): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return gone;
    throw err;
  }
}
