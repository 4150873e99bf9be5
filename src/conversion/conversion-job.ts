/**
 * One conversion of a dataset's Zarr copy (the `generate-zarr` job), in three steps that may run on
 * different workers (decision 0024): plan (check the source out at `ref`, plan against the commit recorded in
 * `index.json`, `conversion-plan.ts`); convert each changed recording into its store in place (a task,
 * `recording-conversions.ts`); and once every task is done, delete stores whose source is gone, write
 * `index.json` last and record the outcome in the database (`index-publication.ts`).
 * A crash at any point leaves the previous `index.json` and its stores readable; a re-run finishes the work.
 */
import type { Deps } from '../deps.js';
import { findDatasetRow } from '../datasets/dataset-queries.js';
import { findRecordings } from '../formats/bids/find-recordings.js';
import type { StoreIndex } from '../formats/zarr/store-index.js';
import { readStoreIndex } from '../formats/zarr/store-index-object.js';
import { diffBase, planConversion } from './conversion-plan.js';
import { publishIndex, type JobResult } from './index-publication.js';
import { assembleCopy, storedPlanOf, type StoredPlan, type TaskOutcome } from './job-plan.js';
import { openSource, type OpenSource } from './recording-conversions.js';
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

/** The dataset's source checked out at `ref` (a worker's tasks pass the plan's commit), ready for conversions. */
export async function checkoutForConversion(deps: Deps, datasetId: string, ref: string): Promise<OpenSource> {
  const dataset = await findDatasetRow(deps.db, datasetId);
  if (!dataset) throw new SourceError(`dataset ${datasetId} no longer exists`);
  const checkout = await checkoutSource(deps, dataset, ref);
  try {
    return await openSource(checkout);
  } catch (err) {
    await checkout.cleanup();
    throw err;
  }
}

/**
 * A job's commit is an ancestor of the one the copy was published from: a delivery that came late or again
 * (GitHub promises no order). Converting it would write its stores over the newer ones, and its index.json
 * too: the job ends here, having written nothing. A branch rolled back to such a commit on purpose is
 * converted by a job naming the branch (`nds admin zarr regenerate <id>`).
 */
export class OlderCommit extends Error {
  constructor(readonly commit: string) {
    super(`commit ${commit} is older than the copy's`);
  }
}

/**
 * Plans the job on a checkout of its source: which recordings to convert (the tasks), keep and delete;
 * `OlderCommit` when the copy is already of a later commit.
 */
export async function planConversionJob(deps: Deps, req: JobRequest, source: OpenSource): Promise<StoredPlan> {
  const { checkout } = source;
  // Only a job naming a commit (a push's delivery) is skipped when it is older: one naming a branch, or asked
  // to convert everything, converts where the branch is now, even rolled back (`nds admin zarr regenerate`).
  const deliveredCommit = /^[0-9a-f]{40}$/.test(req.ref) && !req.full;
  const marked = await recordZarrReady(deps, { dataset_id: req.datasetId, status: 'converting', commit: checkout.commit }, undefined, { evenIfOlder: !deliveredCommit });
  if (marked.reason === 'older_commit') throw new OlderCommit(checkout.commit);
  const recordings = await findRecordings(checkout.dir);
  const previous = req.full ? undefined : await readPreviousIndex(deps, req.datasetId);
  const base = diffBase(previous, checkout.commit, req.full);
  const changed = base && checkout.mirror ? await changedPaths(checkout.mirror, base, checkout.commit, deps.config.maxTreeFiles) : undefined;
  return storedPlanOf(planConversion({ recordings, previous, commit: checkout.commit, changed, full: req.full }), checkout.commit);
}

/** Once every task has its outcome: delete the stores whose source is gone, then write `index.json` and record it. */
export async function publishConversion(deps: Deps, datasetId: string, plan: StoredPlan, outcomes: ReadonlyMap<number, TaskOutcome>): Promise<JobResult> {
  const copy = assembleCopy(plan, outcomes);
  // Latest-only: stores whose source is gone are deleted, after the new ones were written.
  for (const zarr of plan.remove) await deps.objects.deletePrefix(`${datasetId}/zarr/${zarr}/`);
  return publishIndex(deps, { datasetId, commit: plan.commit, ...copy });
}

/** Reports a job that could not run at all (no source, git failure): `zarr_status` becomes `failed`. */
export async function reportJobFailure(deps: Deps, datasetId: string, commit: string | undefined, error: string): Promise<void> {
  await recordZarrReady(deps, { dataset_id: datasetId, status: 'failed', commit: commit ?? '0'.repeat(40), error });
}
