/**
 * A `StoreSink` that writes each key as a file under a folder (the layout a Zarr folder store reads). Files are
 * written with synchronous calls: a store is thousands of small files, and each call through the thread pool
 * (an open, a write and a close a file) cost more CPU than writing its bytes (decision 0041). `nds convert`,
 * its only user besides tests, has nothing else to do meanwhile.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { StoreSink } from './store-sink.js';

export class FolderSink implements StoreSink {
  readonly root: string;
  readonly #made = new Set<string>();

  constructor(root: string) {
    this.root = root;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    if (key.split('/').some((part) => part === '' || part === '.' || part === '..')) throw new Error(`invalid store key: ${key}`);
    const path = join(this.root, key);
    const dir = dirname(path);
    if (!this.#made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.#made.add(dir);
    }
    writeFileSync(path, bytes);
  }
}
