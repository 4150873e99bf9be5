/**
 * The last step of a conversion: write the new `index.json` (after every store it names), then report the
 * copy ready, which records it on the dataset and has the stale cached metadata purged (`hooks.zarrChanged`).
 * Until the index is written, readers keep the previous index and its stores.
 */
import type { Deps } from '../deps.js';
import { buildStoreIndex, type IndexFailure, type IndexStore, type StoreIndexEntry } from '../formats/zarr/store-index.js';
import { writeStoreIndex } from '../formats/zarr/store-index-object.js';
import { reportZarrReady } from './zarr-ready-report.js';
import { syncCatalogue } from '../recordings/catalogue-sync.js';

export interface JobResult {
  commit: string;
  store_count: number;
  failure_count: number;
  converted: string[];
  removed: string[];
  unchanged: number;
  index_etag: string;
}

export interface NewIndex {
  datasetId: string;
  commit: string;
  stores: Array<IndexStore | StoreIndexEntry>;
  failures: IndexFailure[];
  /** Store folders written by this job. */
  converted: string[];
  /** Store folders gone from the copy: their source was removed, or their conversion failed now. */
  removed: string[];
}

/**
 * Where the copy's objects can be read without the gateway: ZARR_PUBLIC_BASE_URL when set (a CDN, a bucket
 * website), else the object store's own public base: the folder store's `/objects/` route of this server,
 * which serves the Zarr copy to anyone, or the S3 bucket's path-style URL (public when the bucket is).
 */
export function publicDataBase(deps: Pick<Deps, 'config' | 'objects'>, datasetId: string): string {
  const { config, objects } = deps;
  if (config.zarrPublicBaseUrl) return `${config.zarrPublicBaseUrl}/${datasetId}/zarr`;
  return objects.publicUrl(`${datasetId}/zarr`);
}

export async function publishIndex(deps: Deps, next: NewIndex): Promise<JobResult> {
  const { config } = deps;
  const index = buildStoreIndex({
    datasetId: next.datasetId,
    contractBase: `${config.zarrCacheBaseUrl}/${next.datasetId}/zarr`,
    dataBase: publicDataBase(deps, next.datasetId),
    sourceCommit: next.commit,
    stores: next.stores,
    failures: next.failures,
    now: deps.clock.now(),
  });
  const written = await writeStoreIndex(deps.objects, next.datasetId, index);
  // The recording catalogue follows the index it was read from; a failure leaves the rows of the previous
  // copy (the next conversion or the startup backfill mends them) and never fails the conversion.
  try {
    await syncCatalogue(deps, next.datasetId, index, next.converted);
  } catch (err) {
    deps.log.warn({ err, dataset: next.datasetId }, 'recording catalogue update failed');
  }
  const result: JobResult = {
    commit: next.commit,
    store_count: next.stores.length,
    failure_count: next.failures.length,
    converted: next.converted,
    removed: next.removed,
    unchanged: next.stores.length - next.converted.length,
    index_etag: written.etag,
  };
  await reportZarrReady(deps, {
    dataset_id: next.datasetId,
    status: 'ready',
    commit: next.commit,
    store_count: result.store_count,
    index_etag: result.index_etag,
    converted: result.converted,
    removed: result.removed,
    failure_count: result.failure_count,
  });
  return result;
}
