/**
 * A conversion's outcome, recorded: by the worker that ran it, directly, and by the completion callback
 * (`POST /webhooks/zarr-ready`) of an external runner; both the same way. It sets the dataset's `zarr_*`
 * fields, brings the recording catalogue in line with the new `index.json` (before the hooks, so the search
 * fields derived after it see it), then has stale cached metadata purged. Replays are harmless, and a callback for a commit
 * older than the recorded one does not move the fields back. The objects a conversion of a public dataset
 * wrote (untagged, so not public) are then opened at the store's public base: the stores it converted and
 * `index.json` when it is ready, the whole copy when it failed half-way; a private copy's `index.json` is
 * checked to name no `data_base` and to be closed (`copy-exposure.ts`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { findDatasetRow, setZarrReady, setZarrStatus } from '../datasets/dataset-queries.js';
import { isAncestor } from '../git/run-git.js';
import { sweepCopy, wantCopySweep } from './copy-exposure.js';
import type { StoreIndex } from '../formats/zarr/store-index.js';
import { readStoreIndex } from '../formats/zarr/store-index-object.js';
import { syncCatalogue } from '../recordings/catalogue-sync.js';

export interface ZarrReadyPayload {
  dataset_id: string;
  status: 'ready' | 'failed' | 'converting';
  commit: string;
  store_count?: number;
  index_etag?: string;
  converted?: string[];
  removed?: string[];
  failure_count?: number;
  error?: string;
}

export interface ZarrReadyOutcome {
  applied: boolean;
  reason?: 'older_commit';
  purged: string[];
}

/** Where a dataset's source repository is mirrored by the conversion job (for ancestry checks). */
export function sourceMirrorDir(dataDir: string, datasetId: string): string {
  return path.join(dataDir, 'sources', `${datasetId}.git`);
}

export interface ZarrReadyOptions {
  /**
   * Recorded although the commit is an ancestor of the recorded one (a worker's job that decided so when it was
   * planned: a branch rolled back, converted on request); left out, such a report is ignored.
   */
  evenIfOlder?: boolean;
  /**
   * The source commit of the copy `payload.converted` were converted over (a worker's plan knows it; null: none
   * or unknown, and the catalogue is read whole); left out (a callback), the dataset's recorded commit.
   */
  previousCommit?: string | null;
}

/** `index`: the index the caller just wrote (a worker); read from the object store when left out (a callback). */
export async function recordZarrReady(deps: Deps, payload: ZarrReadyPayload, index?: StoreIndex, options: ZarrReadyOptions = {}): Promise<ZarrReadyOutcome> {
  const { db, config, log } = deps;
  const dataset = await findDatasetRow(db, payload.dataset_id);
  if (!dataset) throw new NdsError('dataset_not_found', { message: `No dataset ${payload.dataset_id}.` });

  const recorded = dataset.zarr_source_commit;
  if (recorded && recorded !== payload.commit && !options.evenIfOlder) {
    const mirror = sourceMirrorDir(config.dataDir, dataset.id);
    if (existsSync(mirror) && (await isAncestor(mirror, payload.commit, recorded)) === true) {
      log.info({ dataset: dataset.id, commit: payload.commit, recorded }, 'zarr-ready for an older commit ignored');
      return { applied: false, reason: 'older_commit', purged: [] };
    }
  }

  if (payload.status === 'ready') await catalogueCopy(deps, dataset.id, payload, index, options.previousCommit === undefined ? recorded : options.previousCommit);

  const now = deps.clock.now();
  if (payload.status === 'ready') {
    await setZarrReady(db, dataset.id, { commit: payload.commit, storeCount: payload.store_count ?? 0, indexEtag: payload.index_etag ?? null }, now);
  } else {
    // A failure's reason is shown to the dataset's owner (`zarr_error`): senders write it for them.
    await setZarrStatus(db, dataset.id, payload.status, now, payload.error?.slice(0, 2000));
  }

  if (payload.status === 'failed' || payload.status === 'ready') {
    // A private copy's new index is settled too (no data_base, not public-read), whoever wrote it.
    const scope =
      dataset.visibility !== 'public' ? ['index.json'] : payload.status === 'ready' ? ['index.json', ...(payload.converted ?? []).map((z) => `${z}/`)] : null;
    await wantCopySweep(deps, dataset.id, scope);
    await sweepCopy(deps, dataset.id);
  }

  if (payload.status !== 'ready') return { applied: true, purged: [] };
  const stale = ['index.json', ...[...(payload.converted ?? []), ...(payload.removed ?? [])].map((z) => `${z}/zarr.json`)];
  // Best effort: a failed purge leaves the TTLs to expire the copies, and never fails the callback.
  for (const purge of deps.hooks.zarrChanged) {
    try {
      await purge(dataset.id, stale);
    } catch (err) {
      log.warn({ err, dataset: dataset.id }, 'purge after zarr-ready failed');
    }
  }
  return { applied: true, purged: stale };
}

/**
 * The recording catalogue follows the copy's index: the stores `payload` converted over the copy of `from`, or
 * all of them when the catalogue was not whole at it. A failure leaves the rows of the previous copy and the
 * catalogue not whole, so the next conversion or the startup backfill reads it whole; it never fails the
 * recording of the outcome.
 */
async function catalogueCopy(deps: Deps, datasetId: string, payload: ZarrReadyPayload, written: StoreIndex | undefined, from: string | null): Promise<void> {
  try {
    const index = written ?? (await readStoreIndex(deps.objects, datasetId));
    if (!index) {
      deps.log.warn({ dataset: datasetId }, 'zarr-ready for a copy without index.json: the recording catalogue is left as it is');
      return;
    }
    await syncCatalogue(deps, datasetId, index, payload.converted && { from, converted: payload.converted });
  } catch (err) {
    deps.log.warn({ err, dataset: datasetId }, 'recording catalogue update failed');
  }
}
