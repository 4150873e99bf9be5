/** SHA-256 of a file of a source tree, streamed. */
import { createHash } from 'node:crypto';
import { FileReadError } from './conversion-errors.js';
import { SourceTree } from './source-tree.js';

/**
 * Hashes `path`, a regular file inside `tree` (by default the file's own folder); throws `FileReadError` otherwise.
 * A digest the tree knows already (`SourceTree.knownSha256`) is answered once the file opens, without reading it.
 */
export async function fileSha256(path: string, tree?: SourceTree): Promise<string> {
  const within = tree ?? (await SourceTree.around(path));
  const handle = await within.open(path);
  const known = within.knownSha256(path);
  if (known !== undefined) {
    await handle.close();
    return known;
  }
  const hash = createHash('sha256');
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false })) hash.update(chunk as Buffer);
  } catch (cause) {
    throw new FileReadError(`Reading ${within.relative(path) ?? path} failed (${(cause as NodeJS.ErrnoException).code ?? 'error'}).`, { cause });
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}
