import type { ObjectStore } from '../objects/object-store.js';
import type { StoreSink } from '../formats/zarr/store-sink.js';

/**
 * Writes one store into the object store under `prefix`, in an order that keeps readers consistent:
 * chunks as they come, every `zarr.json` held back until `commit()`, then the objects of the store that was
 * there before and that the new store no longer has are deleted. `discard()` removes the store entirely (a
 * recording that failed to convert).
 */
export class ObjectStoreSink implements StoreSink {
  readonly #objects: ObjectStore;
  readonly #prefix: string;
  readonly #written = new Set<string>();
  readonly #metadata = new Map<string, Uint8Array>();
  /**
   * The keys under the prefix before anything was written: listed at the start, not after the writes, so a new
   * store (the common case) costs one empty listing instead of a listing (a `stat` each, on a folder store) of
   * every object it just wrote. Only this sink writes under its prefix while it runs.
   */
  readonly #before: Promise<string[]>;

  constructor(objects: ObjectStore, prefix: string) {
    this.#objects = objects;
    this.#prefix = prefix;
    this.#before = this.#keys();
    // Observed here: a sink that is discarded never asks for them.
    this.#before.catch(() => undefined);
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
    const before = await this.#before;
    // Inner metadata first, the root's zarr.json last: it is what makes the new store visible as a whole.
    const keys = [...this.#metadata.keys()].sort((a, b) => b.split('/').length - a.split('/').length);
    for (const key of keys) {
      await this.#objects.put(this.#prefix + key, this.#metadata.get(key)!, { contentType: 'application/json' });
      this.#written.add(key);
    }
    for (const key of before) if (!this.#written.has(key)) await this.#objects.delete(this.#prefix + key);
  }

  async discard(): Promise<void> {
    await this.#objects.deletePrefix(this.#prefix);
  }

  async #keys(): Promise<string[]> {
    const keys: string[] = [];
    for await (const info of this.#objects.list(this.#prefix)) keys.push(info.key.slice(this.#prefix.length));
    return keys;
  }
}
