import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from './accounts-tables.js';

export type ConversionJobState = 'queued' | 'running' | 'done' | 'failed';

export interface ConversionJobsTable {
  id: Generated<number>;
  dataset_id: string;
  ref: string;
  full: Generated<boolean>;
  state: ConversionJobState;
  attempts: Generated<number>;
  /** Why the job was last asked for: `push`, `regenerate`, `version` (a merged dispatch brings its own). */
  reason: string | null;
  worker_id: string | null;
  requested_at: Generated<Timestamp>;
  started_at: Timestamp | null;
  heartbeat_at: Timestamp | null;
  finished_at: Timestamp | null;
  result: Json<Record<string, unknown>> | null;
  error: string | null;
  /** What the job converts and keeps (`conversion/job-plan.ts` `StoredPlan`), once a worker planned it. */
  plan: Json<Record<string, unknown>> | null;
}

export type ConversionTaskState = 'queued' | 'running' | 'done' | 'failed';

/** One recording of a job to convert (decision 0024); `conversion/task-queue.ts` owns the table. */
export interface ConversionTasksTable {
  id: Generated<number>;
  job_id: number;
  /** Its place among the job's recordings (source order), so the index lists them as the source does. */
  position: number;
  path: string;
  zarr: string;
  state: ConversionTaskState;
  attempts: Generated<number>;
  worker_id: string | null;
  started_at: Timestamp | null;
  heartbeat_at: Timestamp | null;
  finished_at: Timestamp | null;
  /** The index entry of the store written (`StoreIndexEntry`). */
  store: Json<Record<string, unknown>> | null;
  /** The index failure (`IndexFailure`): the converter refused the file, or the task was given up. */
  failure: Json<Record<string, unknown>> | null;
  error: string | null;
}

/** A GitHub delivery already taken (`conversion/github-deliveries.ts` owns the table). */
export interface GithubDeliveriesTable {
  body_sha256: string;
  /** `X-GitHub-Delivery`; null when the delivery had none. */
  delivery_id: string | null;
  received_at: Timestamp;
}

export interface ConversionTables {
  conversion_jobs: ConversionJobsTable;
  conversion_tasks: ConversionTasksTable;
  github_deliveries: GithubDeliveriesTable;
  copy_exposures: CopyExposuresTable;
}

export type ConversionJob = Selectable<ConversionJobsTable>;
export type ConversionTask = Selectable<ConversionTasksTable>;

/**
 * Sweeps of a Zarr copy's public-read tags (decision 0016): wanted while `want_seq > done_seq`, over `scope`
 * (paths under `<id>/zarr/`, `/`-ended for folders; null: the whole copy), by one lease holder at a time.
 */
export interface CopyExposuresTable {
  dataset_id: string;
  want_seq: Generated<number>;
  done_seq: Generated<number>;
  scope: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  lease_until: Timestamp | null;
  lease_holder: string | null;
}
