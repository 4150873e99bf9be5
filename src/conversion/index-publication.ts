/**
 * The last step of a conversion: write the new `index.json` (after every store it names), then report the
 * copy ready (`recordZarrReady`), which records it on the dataset, catalogues its recordings and has the stale
 * cached metadata purged (`hooks.zarrChanged`).
 * Until the index is written, readers keep the previous index and its stores. The index is written holding
 * the copy's lease (`copy-exposure.ts`), so no sweep rewrites it meanwhile, and it names a public `data_base`
 * (and is public-read) only when the dataset is public at that moment. A job's publication asks its `fence`
 * under that lease, before it deletes or writes anything: a worker whose job was taken from it (superseded by
 * a newer version, reclaimed after its lease lapsed) publishes nothing, and a newer job's publication, which
 * needs the same lease, comes after.
 */
import type { Deps } from '../deps.js';
import { datasetVisibility } from '../datasets/dataset-queries.js';
import { publicDataBase, withCopyLease } from './copy-exposure.js';
import { buildStoreIndex, type IndexFailure, type IndexStore, type StoreIndexEntry } from '../formats/zarr/store-index.js';
import { writeStoreIndex } from '../formats/zarr/store-index-object.js';
import { recordZarrReady } from './zarr-ready.js';
import { NdsError } from '../core/errors.js';
import { WriteFenced, type WriteFence } from './object-store-sink.js';

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
  /**
   * The source commit of the index this one replaces, as the job's plan read it: the catalogue reads again
   * only the stores converted over it when it is whole at that commit; null: it is read whole.
   */
  previousCommit: string | null;
  stores: Array<IndexStore | StoreIndexEntry>;
  failures: IndexFailure[];
  /** Store folders written by this job. */
  converted: string[];
  /** Store folders gone from the copy: their source was removed, or their conversion failed now. */
  removed: string[];
  /** Store folders to delete before the index is written (their source is gone). */
  gone?: string[];
  /** The job's hold: asked under the copy's lease before anything is deleted or written. */
  fence?: WriteFence;
}

/** How long the index waits for a sweep of the same copy to let go of it. */
const INDEX_LEASE_WAIT_MS = 10 * 60_000;

export async function publishIndex(deps: Deps, next: NewIndex): Promise<JobResult> {
  const { config } = deps;
  const published = await withCopyLease(deps, next.datasetId, INDEX_LEASE_WAIT_MS, async () => {
    if (next.fence && !(await next.fence.held({ fresh: true }))) throw new WriteFenced(`${next.datasetId}/zarr/index.json`);
    for (const zarr of next.gone ?? []) await deps.objects.deletePrefix(`${next.datasetId}/zarr/${zarr}/`);
    const isPublic = (await datasetVisibility(deps.db, next.datasetId)) === 'public';
    const built = buildStoreIndex({
      datasetId: next.datasetId,
      contractBase: `${config.zarrCacheBaseUrl}/${next.datasetId}/zarr`,
      dataBase: isPublic ? publicDataBase(deps, next.datasetId) : null,
      sourceCommit: next.commit,
      stores: next.stores,
      failures: next.failures,
      now: deps.clock.now(),
    });
    return { index: built, written: await writeStoreIndex(deps.objects, next.datasetId, built, { publicRead: isPublic }) };
  });
  if (!published) throw new NdsError('dataset_not_found', { message: `Dataset ${next.datasetId} was deleted during its conversion.` });
  const { index, written } = published;
  const result: JobResult = {
    commit: next.commit,
    store_count: next.stores.length,
    failure_count: next.failures.length,
    converted: next.converted,
    removed: next.removed,
    unchanged: next.stores.length - next.converted.length,
    index_etag: written.etag,
  };
  // Recorded in the database by this process, as an external runner's callback is (no HTTP to PUBLIC_URL):
  // the dataset's fields, the recording catalogue from this index, the search fields, the purges.
  await recordZarrReady(
    deps,
    {
      dataset_id: next.datasetId,
      status: 'ready',
      commit: next.commit,
      store_count: result.store_count,
      index_etag: result.index_etag,
      converted: result.converted,
      removed: result.removed,
      failure_count: result.failure_count,
    },
    index,
    // The job's plan decided to convert this commit (conversion-job.ts): one job of a dataset runs at a time.
    // The stores it converted changed the copy it was planned over, which may not be the recorded one: a job
    // that wrote its index and was lost before it recorded it left the copy of a commit the database never saw.
    { evenIfOlder: true, previousCommit: next.previousCommit },
  );
  return result;
}
