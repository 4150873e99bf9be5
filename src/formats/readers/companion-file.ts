/** Finds a companion file named inside a header, falling back to `<stem><ext>` when BIDS renaming left the name stale. */
import { dirname, join, basename } from 'node:path';
import type { SourceTree } from '../source-tree.js';

export interface Companion {
  path: string;
  /** True when the named file was missing and `<stem><ext>` was used instead. */
  recovered: boolean;
}

/**
 * The companion of `primary`, looked for beside it: a header's name counts by its last segment only
 * (`DataFile=../../x` and `C:\data\x.eeg` both mean `x` beside the header). An entry found there is
 * returned even when it is a link or no regular file: opening it through `tree` then says why it may not be read.
 */
export async function findCompanion(primary: string, named: string | undefined, ext: string, tree: SourceTree): Promise<Companion | undefined> {
  const dir = dirname(primary);
  if (named) {
    // Names are relative to the header's folder; Windows writers may use backslashes.
    const candidate = join(dir, basename(named.replaceAll('\\', '/')));
    if (candidate !== dir && (await tree.exists(candidate))) return { path: candidate, recovered: false };
  }
  const stem = basename(primary).replace(/\.[^.]+$/, '');
  const fallback = join(dir, `${stem}${ext}`);
  if (await tree.exists(fallback)) return { path: fallback, recovered: named !== undefined };
  return undefined;
}
