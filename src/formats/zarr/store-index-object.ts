/**
 * `index.json` in the object store, at `<id>/zarr/index.json`: the one place that reads and writes it, so
 * its key and its shape (`StoreIndex`) are known once.
 */
import type { ObjectInfo, ObjectStore } from '../../objects/object-store.js';
import { parseStoreIndex, serializeStoreIndex, type StoreIndex } from './store-index.js';

export function storeIndexKey(datasetId: string): string {
  return `${datasetId}/zarr/index.json`;
}

/**
 * The dataset's index; `undefined` when it has none (never converted). Throws a `SyntaxError` when the
 * stored object is not an index: each caller decides what a damaged index means for it.
 */
export async function readStoreIndex(objects: Pick<ObjectStore, 'readAll'>, datasetId: string): Promise<StoreIndex | undefined> {
  const bytes = await objects.readAll(storeIndexKey(datasetId));
  return bytes && parseStoreIndex(bytes);
}

/**
 * Writes the dataset's index whole (readers see the old one or the new one); its entity tag comes back.
 * With `publicRead`, it is readable at the store's anonymous public base from its first byte.
 */
export function writeStoreIndex(objects: Pick<ObjectStore, 'put'>, datasetId: string, index: StoreIndex, options: { publicRead?: boolean } = {}): Promise<ObjectInfo> {
  return objects.put(storeIndexKey(datasetId), serializeStoreIndex(index), { contentType: 'application/json', publicRead: options.publicRead });
}
