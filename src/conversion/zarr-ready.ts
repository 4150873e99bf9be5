/**
 * The completion callback (`POST /webhooks/zarr-ready`): records a conversion's outcome in the dataset's
 * `zarr_*` fields, then has stale cached metadata purged. Replays are harmless, and a callback for a commit
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

export async function recordZarrReady(deps: Deps, payload: ZarrReadyPayload): Promise<ZarrReadyOutcome> {
  const { db, config, log } = deps;
  const dataset = await findDatasetRow(db, payload.dataset_id);
  if (!dataset) throw new NdsError('dataset_not_found', { message: `No dataset ${payload.dataset_id}.` });

  const recorded = dataset.zarr_source_commit;
  if (recorded && recorded !== payload.commit) {
    const mirror = sourceMirrorDir(config.dataDir, dataset.id);
    if (existsSync(mirror) && (await isAncestor(mirror, payload.commit, recorded)) === true) {
      log.info({ dataset: dataset.id, commit: payload.commit, recorded }, 'zarr-ready for an older commit ignored');
      return { applied: false, reason: 'older_commit', purged: [] };
    }
  }

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
