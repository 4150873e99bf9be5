/** A `StoreSink` that writes each key as a file under a folder (the layout a Zarr folder store reads). */
import { mkdir, writeFile } from 'node:fs/promises';
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
      await mkdir(dir, { recursive: true });
      this.#made.add(dir);
    }
    await writeFile(path, bytes);
  }
}
