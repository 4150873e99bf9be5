import type { ObjectStore } from '../objects/object-store.js';
import type { StoreSink } from '../formats/zarr/store-sink.js';

/**
 * Whether the writes of a sink are still its worker's to make. A recording task whose lease lapsed (a stalled
 * worker, a clock ahead) is converted again by another worker, which may publish its store: the first worker
 * must then neither write over that store nor delete it.
 */
export interface WriteFence {
  /**
   * True while the task is this worker's. `fresh`: ask the queue now (before the commit or a discard); else an
   * answer confirmed within the last second will do.
   */
  held(options?: { fresh?: boolean }): Promise<boolean>;
}

/** A sink's task was taken back from this worker: nothing more of it is written, and its outcome is not recorded. */
export class WriteFenced extends Error {
  constructor(prefix: string) {
    super(`the task writing ${prefix} was taken back from this worker`);
    this.name = 'WriteFenced';
  }
}

/**
 * The object store refused a write or a delete of a sink (an S3 `503 Slow Down`, a full disk): a fault of the
 * moment, not of the recording, so its task is tried again rather than failed.
 */
export class StoreWriteError extends Error {
  constructor(key: string, cause: unknown) {
    super(`writing ${key} failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StoreWriteError';
  }
}

/**
 * Writes one store into the object store under `prefix`, in an order that keeps readers consistent:
 * chunks as they come, every `zarr.json` held back until `commit()`, then the objects of the store that was
 * there before and that the new store no longer has are deleted. `discard()` removes the store entirely (a
 * recording that failed to convert). With a `fence`, each write first asks that the task is still this
 * worker's, and a sink whose task was taken writes and deletes nothing more (a write already under way when
 * the task was taken may still land).
 */
export class ObjectStoreSink implements StoreSink {
  readonly #objects: ObjectStore;
  readonly #prefix: string;
  readonly #fence: WriteFence | undefined;
  readonly #written = new Set<string>();
  readonly #metadata = new Map<string, Uint8Array>();
  /**
   * The keys under the prefix before anything was written: listed at the start, not after the writes, so a new
   * store (the common case) costs one empty listing instead of a listing (a `stat` each, on a folder store) of
   * every object it just wrote. Only this sink writes under its prefix while it runs.
   */
  readonly #before: Promise<string[]>;

  constructor(objects: ObjectStore, prefix: string, fence?: WriteFence) {
    this.#objects = objects;
    this.#prefix = prefix;
    this.#fence = fence;
    this.#before = this.#keys();
    // Observed here: a sink that is discarded never asks for them.
    this.#before.catch(() => undefined);
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    if (key === 'zarr.json' || key.endsWith('/zarr.json')) {
      this.#metadata.set(key, bytes);
      return;
    }
    await this.#stillHeld(false);
    await this.#write(key, () => this.#objects.put(this.#prefix + key, bytes));
    this.#written.add(key);
  }

  async commit(): Promise<void> {
    const before = await this.#before;
    await this.#stillHeld(true);
    // Inner metadata first, the root's zarr.json last: it is what makes the new store visible as a whole.
    const keys = [...this.#metadata.keys()].sort((a, b) => b.split('/').length - a.split('/').length);
    for (const key of keys) {
      await this.#write(key, () => this.#objects.put(this.#prefix + key, this.#metadata.get(key)!, { contentType: 'application/json' }));
      this.#written.add(key);
    }
    for (const key of before) if (!this.#written.has(key)) await this.#write(key, () => this.#objects.delete(this.#prefix + key));
  }

  async #write(key: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (err) {
      throw new StoreWriteError(this.#prefix + key, err);
    }
  }

  /** Removes the store; nothing when the task is no longer this worker's (the store may be another's now). */
  async discard(): Promise<void> {
    if (this.#fence && !(await this.#fence.held({ fresh: true }))) return;
    await this.#objects.deletePrefix(this.#prefix);
  }

  async #stillHeld(fresh: boolean): Promise<void> {
    if (this.#fence && !(await this.#fence.held({ fresh }))) throw new WriteFenced(this.#prefix);
  }

  async #keys(): Promise<string[]> {
    const keys: string[] = [];
    for await (const info of this.#objects.list(this.#prefix)) keys.push(info.key.slice(this.#prefix.length));
    return keys;
  }
}
