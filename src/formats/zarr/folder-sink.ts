/**
 * A `StoreSink` that writes each key as a file under a folder (the layout a Zarr folder store reads). Small
 * files (metadata) are written with synchronous calls: a store is thousands of small files, and each call
 * through the thread pool (an open, a write and a close a file) cost more CPU than writing its bytes (decision
 * 0041). Chunks, given a `DirectObjectWriter`, are written past the page cache on its threads while the next
 * ones are encoded, as the folder store writes them (decisions 0044 and 0045).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DirectObjectWriter } from '../../objects/direct-object-writer.js';
import type { StoreSink } from './store-sink.js';

export class FolderSink implements StoreSink {
  readonly root: string;
  readonly #made = new Set<string>();
  readonly #writer: DirectObjectWriter | undefined;

  constructor(root: string, writer?: DirectObjectWriter) {
    this.root = root;
    this.#writer = writer;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    if (key.split('/').some((part) => part === '' || part === '.' || part === '..')) throw new Error(`invalid store key: ${key}`);
    const path = join(this.root, key);
    // The writer makes a missing folder itself; it answers undefined when the filesystem refuses O_DIRECT.
    if (this.#writer?.takes(bytes.length) && (await this.#writer.write(bytes, `${path}.partial`, path))) return;
    const dir = dirname(path);
    if (!this.#made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.#made.add(dir);
    }
    writeFileSync(path, bytes);
  }
}
