import type { ObjectStore } from '../objects/object-store.js';
import type { StoreSink } from '../formats/zarr/store-sink.js';

/**
 * Writes one store into the object store under `prefix`, in an order that keeps readers consistent:
 * chunks as they come, every `zarr.json` held back until `commit()`, then chunks the new store no longer
 * has are deleted. `discard()` removes the store entirely (a recording that failed to convert).
 */
export class ObjectStoreSink implements StoreSink {
  readonly #objects: ObjectStore;
  readonly #prefix: string;
  readonly #written = new Set<string>();
  readonly #metadata = new Map<string, Uint8Array>();

  constructor(objects: ObjectStore, prefix: string) {
    this.#objects = objects;
    this.#prefix = prefix;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    if (key === 'zarr.json' || key.endsWith('/zarr.json')) {
      this.#metadata.set(key, bytes);
      return;
    }
    await this.#objects.put(this.#prefix + key, bytes);
    this.#written.add(key);
  }

  async commit(): Promise<void> {
    // Inner metadata first, the root's zarr.json last: it is what makes the new store visible as a whole.
    const keys = [...this.#metadata.keys()].sort((a, b) => b.split('/').length - a.split('/').length);
    for (const key of keys) {
      await this.#objects.put(this.#prefix + key, this.#metadata.get(key)!, { contentType: 'application/json' });
      this.#written.add(key);
    }
    const stale: string[] = [];
    for await (const info of this.#objects.list(this.#prefix)) {
      if (!this.#written.has(info.key.slice(this.#prefix.length))) stale.push(info.key);
    }
    for (const key of stale) await this.#objects.delete(key);
  }

  async discard(): Promise<void> {
    await this.#objects.deletePrefix(this.#prefix);
  }
}
