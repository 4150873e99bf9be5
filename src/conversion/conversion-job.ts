/**
 * One conversion of a dataset's Zarr copy (the `generate-zarr` job): check the source out at `ref`, plan
 * against the commit recorded in `index.json` (`conversion-plan.ts`), convert the recordings whose data or
 * sidecars changed into their stores in place (`recording-conversions.ts`), delete stores whose source is
 * gone, then write `index.json` last and record the outcome in the database (`index-publication.ts`).
 * A crash at any point leaves the previous `index.json` and its stores readable; a re-run finishes the work.
 */
import type { Deps } from '../deps.js';
import { findDatasetRow } from '../datasets/dataset-queries.js';
import { findRecordings } from '../formats/bids/find-recordings.js';
import type { StoreIndex } from '../formats/zarr/store-index.js';
import { readStoreIndex } from '../formats/zarr/store-index-object.js';
import { diffBase, planConversion } from './conversion-plan.js';
import { publishIndex, type JobResult } from './index-publication.js';
import { convertPlannedRecordings } from './recording-conversions.js';
import { changedPaths, checkoutSource, SourceError } from './source-checkout.js';
import { recordZarrReady } from './zarr-ready.js';

export interface JobRequest {
  datasetId: string;
  ref: string;
  full: boolean;
}

/** The copy's index as it is; undefined when there is none or it is damaged (everything is converted then). */
async function readPreviousIndex(deps: Deps, datasetId: string): Promise<StoreIndex | undefined> {
  try {
    return await readStoreIndex(deps.objects, datasetId);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

export async function runConversionJob(deps: Deps, req: JobRequest, onProgress?: (done: number, total: number) => void): Promise<JobResult> {
  const dataset = await findDatasetRow(deps.db, req.datasetId);
  if (!dataset) throw new SourceError(`dataset ${req.datasetId} no longer exists`);
  const checkout = await checkoutSource(deps, dataset, req.ref);
  try {
    await recordZarrReady(deps, { dataset_id: dataset.id, status: 'converting', commit: checkout.commit });
    const recordings = await findRecordings(checkout.dir);
    const previous = req.full ? undefined : await readPreviousIndex(deps, dataset.id);
    const base = diffBase(previous, checkout.commit, req.full);
    const changed = base && checkout.mirror ? await changedPaths(checkout.mirror, base, checkout.commit) : undefined;
    const plan = planConversion({ recordings, previous, commit: checkout.commit, changed, full: req.full });

    const outcome = await convertPlannedRecordings(deps, dataset.id, checkout, plan, onProgress);
    // Latest-only: stores whose source is gone are deleted, after the new ones were written.
    for (const zarr of plan.remove) await deps.objects.deletePrefix(`${dataset.id}/zarr/${zarr}/`);

    return await publishIndex(deps, {
      datasetId: dataset.id,
      commit: checkout.commit,
      stores: outcome.stores,
      failures: outcome.failures,
      converted: outcome.converted,
      removed: [...plan.remove, ...outcome.failed],
    });
  } finally {
    await checkout.cleanup();
  }
}

/** Reports a job that could not run at all (no source, git failure): `zarr_status` becomes `failed`. */
export async function reportJobFailure(deps: Deps, datasetId: string, commit: string | undefined, error: string): Promise<void> {
  await recordZarrReady(deps, { dataset_id: datasetId, status: 'failed', commit: commit ?? '0'.repeat(40), error });
}
