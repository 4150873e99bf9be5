/** Finds a companion file named inside a header, falling back to `<stem><ext>` when BIDS renaming left the name stale. */
import { stat } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';

export interface Companion {
  path: string;
  /** True when the named file was missing and `<stem><ext>` was used instead. */
  recovered: boolean;
}

export async function findCompanion(primary: string, named: string | undefined, ext: string): Promise<Companion | undefined> {
  const dir = dirname(primary);
  if (named) {
    // Names are relative to the header's folder; Windows writers may use backslashes.
    const candidate = join(dir, basename(named.replaceAll('\\', '/')));
    if (await isFile(candidate)) return { path: candidate, recovered: false };
  }
  const stem = basename(primary).replace(/\.[^.]+$/, '');
  const fallback = join(dir, `${stem}${ext}`);
  if (await isFile(fallback)) return { path: fallback, recovered: named !== undefined };
  return undefined;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
