/**
 * A planned job as the database keeps it (`conversion_jobs.plan`, decision 0024): the source commit, every
 * recording in source order with what happens to it (kept store, kept failure, or converted by a task at
 * its position), and the stores to delete. Pure: made from a `ConversionPlan`, and turned back into the
 * new index's stores and failures once every task has its outcome.
 */
import type { IndexFailure, IndexStore, StoreIndexEntry } from '../formats/zarr/store-index.js';
import type { ConversionPlan } from './conversion-plan.js';

export interface PlannedRecording {
  path: string;
  zarr: string;
  modality: string;
  /** The previous store, kept as it is. */
  keep?: StoreIndexEntry;
  /** The previous failure, kept as it is. */
  keepFailure?: IndexFailure;
}

export interface StoredPlan {
  commit: string;
  /**
   * The source commit of the index the plan was made over: the copy this conversion changes. Null when it was
   * made over none (a full conversion, no index, a damaged one, or one without a commit); absent from plans
   * stored before it was kept.
   */
  previousCommit?: string | null;
  /**
   * What the job asked for when it was planned. A job reclaimed from a lost worker waits with its plan, and a
   * dispatch merged into it meanwhile changes what it asks for: its worker runs the plan, then queues that.
   * Absent from plans stored before it was kept.
   */
  asked?: { ref: string; full: boolean; reason: string | null };
  /** Every recording of the source, in source order; one without `keep`/`keepFailure` is a task. */
  recordings: PlannedRecording[];
  /** Store folders whose source is gone: deleted after the new stores are written. */
  remove: string[];
}

/** What a task ended with: the store it wrote, or the failure the index lists. */
export type TaskOutcome = { store: IndexStore; failure?: undefined } | { store?: undefined; failure: IndexFailure };

export function storedPlanOf(plan: ConversionPlan, commit: string, previousCommit: string | null): StoredPlan {
  const recordings = plan.steps.map((step): PlannedRecording => {
    const { path, zarr, modality } = step.recording;
    if (step.action === 'keep_store') return { path, zarr, modality, keep: step.store };
    if (step.action === 'keep_failure') return { path, zarr, modality, keepFailure: step.failure };
    return { path, zarr, modality };
  });
  return { commit, previousCommit, recordings, remove: plan.remove };
}

/** The recordings a task converts, with their position in the plan. */
export function plannedTasks(plan: StoredPlan): Array<{ position: number; path: string; zarr: string }> {
  return plan.recordings.flatMap((r, position) => (r.keep || r.keepFailure ? [] : [{ position, path: r.path, zarr: r.zarr }]));
}

export interface AssembledCopy {
  stores: Array<IndexStore | StoreIndexEntry>;
  failures: IndexFailure[];
  /** Store folders written by the tasks. */
  converted: string[];
  /** Store folders gone: their source was removed, or their conversion failed now. */
  removed: string[];
}

/** The new index's content, in source order, from the plan and each task's outcome (by position). */
export function assembleCopy(plan: StoredPlan, outcomes: ReadonlyMap<number, TaskOutcome>): AssembledCopy {
  const copy: AssembledCopy = { stores: [], failures: [], converted: [], removed: [...plan.remove] };
  plan.recordings.forEach((r, position) => {
    if (r.keep) return void copy.stores.push(r.keep);
    if (r.keepFailure) return void copy.failures.push(r.keepFailure);
    const outcome = outcomes.get(position);
    if (outcome?.store) {
      copy.stores.push(outcome.store);
      copy.converted.push(r.zarr);
    } else {
      copy.failures.push(outcome?.failure ?? { path: r.path, zarr: r.zarr, code: 'corrupt_or_truncated', reason: 'The conversion of this file did not finish.', kind: 'service' });
      copy.removed.push(r.zarr);
    }
  });
  return copy;
}
