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
import type { WriteFence } from './object-store-sink.js';
import { changedPaths, checkoutSource, SourceError } from './source-checkout.js';
import { unpublishedStores } from './task-queue.js';
import { recordZarrReady } from './zarr-ready.js';

export interface JobRequest {
  datasetId: string;
  ref: string;
  full: boolean;
  /** Why it was dispatched (`push`, `regenerate`, `version`, ...); null for a job queued before reasons were kept. */
  reason: string | null;
}

/**
 * Whether a job converts where `main` is when it is planned rather than the commit it names: a push's
 * delivery does, also one merged into a waiting job asked to convert everything. GitHub promises no order of
 * deliveries and sends them again on request, and a dispatch while a job waits replaces the waiting job's
 * commit and reason, so the commit a delivery names may be behind `main` (a later push), or ahead of it (a
 * force-push that took it back). `main` itself is the source's state.
 */
export function followsMain(req: JobRequest): boolean {
  return req.reason === 'push' && /^[0-9a-f]{40}$/.test(req.ref);
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

/**
 * The dataset's source checked out at `ref` (a worker's tasks pass the plan's commit), ready for conversions;
 * `followMain`: where `main` is now (`followsMain`).
 */
export async function checkoutForConversion(deps: Deps, datasetId: string, ref: string, options: { followMain?: boolean } = {}): Promise<OpenSource> {
  const dataset = await findDatasetRow(deps.db, datasetId);
  if (!dataset) throw new SourceError(`dataset ${datasetId} no longer exists`);
  const checkout = await checkoutSource(deps, dataset, ref, { followMain: options.followMain });
  try {
    return await openSource(checkout);
  } catch (err) {
    await checkout.cleanup();
    throw err;
  }
}

/** The source a job is planned on: its ref, or `main` now for a push's delivery. */
export function checkoutForJob(deps: Deps, req: JobRequest): Promise<OpenSource> {
  return checkoutForConversion(deps, req.datasetId, req.ref, { followMain: followsMain(req) });
}

/**
 * A push's delivery whose commit `main` no longer names, when the copy is already of where `main` is: it came
 * late or again, and there is nothing to convert. The job ends here, having written nothing.
 */
export class StaleDelivery extends Error {
  constructor(
    readonly commit: string,
    readonly main: string,
  ) {
    super(`commit ${commit} is not main's, and the copy is of main's ${main} already`);
  }
}

/**
 * Plans the job on a checkout of its source (`checkoutForJob`): which recordings to convert (the tasks), keep
 * and delete; `StaleDelivery` when a push's delivery finds the copy already of `main`.
 */
export async function planConversionJob(deps: Deps, req: JobRequest, source: OpenSource): Promise<StoredPlan> {
  const { checkout } = source;
  // A job asked to convert everything converts, whatever the copy is of.
  if (followsMain(req) && !req.full && checkout.mirror && checkout.commit !== req.ref) {
    const dataset = await findDatasetRow(deps.db, req.datasetId);
    if (dataset?.zarr_source_commit === checkout.commit) throw new StaleDelivery(req.ref, checkout.commit);
  }
  // What the job converts was decided here, on the source as fetched now: recorded even when it is older than
  // the copy's commit (a branch rolled back, a commit asked for by name).
  await recordZarrReady(deps, { dataset_id: req.datasetId, status: 'converting', commit: checkout.commit }, undefined, { evenIfOlder: true });
  const recordings = await findRecordings(checkout.dir);
  const previous = req.full ? undefined : await readPreviousIndex(deps, req.datasetId);
  const base = diffBase(previous, checkout.commit, req.full);
  const changed = base && checkout.mirror ? await changedPaths(checkout.mirror, base, checkout.commit, deps.config.maxTreeFiles) : undefined;
  const unpublished = await unpublishedStores(deps.db, req.datasetId);
  const plan = storedPlanOf(planConversion({ recordings, previous, commit: checkout.commit, changed, full: req.full, unpublished }), checkout.commit, previous?.source_commit ?? null);
  return { ...plan, asked: { ref: req.ref, full: req.full, reason: req.reason } };
}

/** What a job asks for now when a dispatch was merged into it after its plan was made; undefined otherwise. */
export function askedSincePlanned(plan: StoredPlan, req: JobRequest): JobRequest | undefined {
  const asked = plan.asked;
  if (!asked) return undefined;
  return asked.ref !== req.ref || asked.reason !== req.reason || (req.full && !asked.full) ? req : undefined;
}

/** Once every task has its outcome: delete the stores whose source is gone, then write `index.json` and record it. */
export async function publishConversion(deps: Deps, datasetId: string, plan: StoredPlan, outcomes: ReadonlyMap<number, TaskOutcome>, fence?: WriteFence): Promise<JobResult> {
  const copy = assembleCopy(plan, outcomes);
  // Latest-only: stores whose source is gone are deleted (by publishIndex), after the new ones were written.
  // A plan stored before it kept the previous commit changed a copy of a commit unknown: the catalogue is read whole.
  return publishIndex(deps, { datasetId, commit: plan.commit, previousCommit: plan.previousCommit ?? null, gone: plan.remove, fence, ...copy });
}

/** Reports a job that could not run at all (no source, git failure): `zarr_status` becomes `failed`. */
export async function reportJobFailure(deps: Deps, datasetId: string, commit: string | undefined, error: string): Promise<void> {
  await recordZarrReady(deps, { dataset_id: datasetId, status: 'failed', commit: commit ?? '0'.repeat(40), error });
}
