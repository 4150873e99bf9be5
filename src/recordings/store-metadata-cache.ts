/**
 * The read side's store metadata, kept by store: each use checks the root `zarr.json`'s entity tag alone (a
 * stat for the folder store, a HEAD for S3) and reads the rest again only when the store was rewritten, so a
 * new conversion is seen at the next request. One a process and object store, made by `lifecycle.ts`.
 */
import type { ObjectStore } from '../objects/object-store.js';
import { readStoreMetadata, storePrefix, type StoreMetadata } from './store-metadata.js';

/** Most stores kept; past it, the first kept is dropped. */
export const MAX_STORE_METADATA = 512;

export class StoreMetadataCache {
  readonly #objects: Pick<ObjectStore, 'get' | 'head'>;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, StoreMetadata>();

  constructor(objects: Pick<ObjectStore, 'get' | 'head'>, maxEntries = MAX_STORE_METADATA) {
    this.#objects = objects;
    this.#maxEntries = maxEntries;
  }

  /** The store's metadata as it is now; `undefined` when the store (its root `zarr.json`) is not there. */
  async read(datasetId: string, zarr: string): Promise<StoreMetadata | undefined> {
    const prefix = storePrefix(datasetId, zarr);
    const kept = this.#entries.get(prefix);
    if (kept && (await this.#objects.head(`${prefix}zarr.json`))?.etag === kept.etag) return kept;
    const metadata = await readStoreMetadata(this.#objects, datasetId, zarr);
    this.#entries.delete(prefix);
    if (!metadata) return undefined;
    if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(prefix, metadata);
    return metadata;
  }

  /** How many stores are kept. */
  get size(): number {
    return this.#entries.size;
  }
}
