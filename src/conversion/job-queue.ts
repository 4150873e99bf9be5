/**
 * The conversion job queue, in the database (this file owns `conversion_jobs`): one queued and one running
 * job per dataset at most. A dispatch while a job waits is coalesced into it; a dispatch while one runs
 * becomes its single follow-up. Workers claim with `FOR UPDATE SKIP LOCKED`, so any number of them can share
 * the queue; on PostgreSQL a queued job (or task) is announced on `QUEUE_CHANNEL` so idle workers start at once.
 * A job that is lost too often, or runs too long, is given up (`reclaimLostJobs`); finished ones are pruned.
 */
import { sql, type Kysely } from 'kysely';
import type { ConversionJob } from '../db/conversion-tables.js';
import type { Database } from '../db/types.js';
import type { StoredPlan } from './job-plan.js';
import { cancelJobTasks, insertTasks } from './task-queue.js';
import { isUniqueViolation } from '../db/sql-errors.js';

/** The `LISTEN/NOTIFY` channel on which new work is announced to the workers. */
export const QUEUE_CHANNEL = 'nds_conversion_queue';

/** Tells listening workers (PostgreSQL) that there is work; polling finds it otherwise. */
export async function announceWork(db: Kysely<Database>): Promise<void> {
  await sql`select pg_notify(${QUEUE_CHANNEL}, '')`.execute(db);
}

export interface EnqueueRequest {
  datasetId: string;
  ref: string;
  full: boolean;
  reason: string;
}

/** Queues a conversion; `coalesced` is true when it merged into a job already waiting. */
export async function enqueueConversion(db: Kysely<Database>, req: EnqueueRequest): Promise<{ job: ConversionJob; coalesced: boolean }> {
  const { rows } = await sql<ConversionJob & { coalesced: boolean }>`
    insert into conversion_jobs (dataset_id, ref, "full", state, reason)
    values (${req.datasetId}, ${req.ref}, ${req.full}, 'queued', ${req.reason})
    on conflict (dataset_id) where state = 'queued'
    do update set "full" = conversion_jobs."full" or excluded."full", ref = excluded.ref, reason = excluded.reason, requested_at = now()
    returning *, (xmax <> 0) as coalesced`.execute(db);
  const { coalesced, ...job } = rows[0];
  await announceWork(db);
  return { job, coalesced };
}

/** Whether a conversion of the dataset waits in the queue. */
export async function hasQueuedJob(db: Kysely<Database>, datasetId: string): Promise<boolean> {
  const row = await db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', datasetId).where('state', '=', 'queued').executeTakeFirst();
  return row !== undefined;
}

/**
 * Takes the longest-waiting queued job whose dataset has none running; `undefined` when there is nothing to
 * do. A start counts as an attempt while the job is unplanned (its worker plans alone); once planned, its
 * recording tasks count their own attempts, and publishing counts one (`countPublishAttempt`).
 * `started_at` is the first start: the time limit runs from it.
 */
export async function claimNextJob(db: Kysely<Database>, workerId: string, now: Date): Promise<ConversionJob | undefined> {
  try {
    const { rows } = await sql<ConversionJob>`
      update conversion_jobs set state = 'running', started_at = coalesce(started_at, ${now}), heartbeat_at = ${now}, worker_id = ${workerId},
        attempts = attempts + (case when plan is null then 1 else 0 end)
      where id = (
        select j.id from conversion_jobs j
        where j.state = 'queued'
          and not exists (select 1 from conversion_jobs r where r.dataset_id = j.dataset_id and r.state = 'running')
        order by j.requested_at, j.id
        limit 1
        for update skip locked
      )
      returning *`.execute(db);
    return rows[0];
  } catch (err) {
    // Two workers picked jobs of one dataset at once: the unique index let one through.
    if (isUniqueViolation(err)) return undefined;
    throw err;
  }
}

/** Marks the job alive; false when this worker no longer owns it (reclaimed, given up, or its dataset deleted). */
export async function heartbeat(db: Kysely<Database>, jobId: number, workerId: string, now: Date): Promise<boolean> {
  const r = await db.updateTable('conversion_jobs').set({ heartbeat_at: now }).where('id', '=', jobId).where('state', '=', 'running').where('worker_id', '=', workerId).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Stores the job's plan and queues its recording tasks, in one transaction, if this worker still owns the
 * job; then announces the tasks. Returns whether it did.
 */
export async function planJob(db: Kysely<Database>, jobId: number, workerId: string, plan: StoredPlan, tasks: ReadonlyArray<{ position: number; path: string; zarr: string }>): Promise<boolean> {
  const stored = await db.transaction().execute(async (trx) => {
    const r = await trx.updateTable('conversion_jobs').set({ plan: JSON.stringify(plan) }).where('id', '=', jobId).where('state', '=', 'running').where('worker_id', '=', workerId).executeTakeFirst();
    if (r.numUpdatedRows === 0n) return false;
    await insertTasks(trx, jobId, tasks);
    return true;
  });
  if (stored && tasks.length > 0) await announceWork(db);
  return stored;
}

/** The plan of a job (a worker taking one of its tasks reads the commit and the recording from it). */
export async function jobPlan(db: Kysely<Database>, jobId: number): Promise<{ datasetId: string; plan: StoredPlan } | undefined> {
  const row = await db.selectFrom('conversion_jobs').select(['dataset_id', 'plan']).where('id', '=', jobId).executeTakeFirst();
  return row?.plan ? { datasetId: row.dataset_id, plan: row.plan as unknown as StoredPlan } : undefined;
}

/** Publishing runs alone, like planning: it counts as an attempt of the job. False when the job is no longer this worker's. */
export async function countPublishAttempt(db: Kysely<Database>, jobId: number, workerId: string): Promise<boolean> {
  const r = await db.updateTable('conversion_jobs').set({ attempts: sql<number>`attempts + 1` }).where('id', '=', jobId).where('state', '=', 'running').where('worker_id', '=', workerId).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Records how a job ended. Only its owner's record counts: a job reclaimed from this worker (which then
 * looked lost) and run again elsewhere is finished by that run, not this one.
 */
export async function finishJob(
  db: Kysely<Database>,
  jobId: number,
  workerId: string,
  outcome: { state: 'done' | 'failed'; result?: Record<string, unknown>; error?: string },
  now: Date,
): Promise<void> {
  await db
    .updateTable('conversion_jobs')
    .set({ state: outcome.state, finished_at: now, result: outcome.result ? JSON.stringify(outcome.result) : null, error: outcome.error ?? null })
    .where('id', '=', jobId)
    .where('state', '=', 'running')
    .where('worker_id', '=', workerId)
    .execute();
}

export interface QueueLimits {
  /** A running job whose heartbeat is older than this is lost (ms). */
  leaseMs: number;
  /** Attempts after which a lost job is given up (CONVERSION_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** Seconds a job may run from its first start (CONVERSION_MAX_S). */
  maxS: number;
}

/** A job ended by `reclaimLostJobs`, with the reason its owner and administrators are shown. */
export interface GivenUpJob {
  job: ConversionJob;
  reason: string;
}

/**
 * Puts back running jobs whose worker is lost, so the re-run finishes the work: those whose heartbeat is
 * older than the lease (a worker anywhere that stopped), and those `ownerGone` names (a process of this host
 * that died: at once, without waiting out the lease). A lost job started `maxAttempts` times already, and any
 * running job past the time limit, is ended `failed` instead, its unfinished tasks cancelled. When the
 * dataset already has a queued job, the lost one is closed (the queued one covers it). A job put back goes to
 * the end of the queue, so a job that keeps killing its workers does not starve the others.
 */
export async function reclaimLostJobs(
  db: Kysely<Database>,
  now: Date,
  limits: QueueLimits,
  ownerGone: (workerId: string | null) => boolean,
): Promise<{ requeued: number; givenUp: GivenUpJob[] }> {
  const cutoff = now.getTime() - limits.leaseMs;
  const deadline = now.getTime() - limits.maxS * 1000;
  return db.transaction().execute(async (trx) => {
    const running = await trx.selectFrom('conversion_jobs').selectAll().where('state', '=', 'running').forUpdate().skipLocked().execute();
    const givenUp: GivenUpJob[] = [];
    let requeued = 0;
    const end = async (job: ConversionJob, reason: string) => {
      await trx.updateTable('conversion_jobs').set({ state: 'failed', finished_at: now, error: reason }).where('id', '=', job.id).execute();
      await cancelJobTasks(trx, job.id, reason, now);
    };
    for (const job of running) {
      if (job.started_at !== null && job.started_at.getTime() < deadline) {
        const reason = `The conversion ran longer than its time limit (CONVERSION_MAX_S, ${limits.maxS} s) and was ended.`;
        await end(job, reason);
        givenUp.push({ job, reason });
        continue;
      }
      const lost = job.heartbeat_at === null || job.heartbeat_at.getTime() < cutoff || ownerGone(job.worker_id);
      if (!lost) continue;
      if (job.attempts >= limits.maxAttempts) {
        const reason = `The conversion stopped its worker ${job.attempts} times (the process died or was lost each time) and was given up.`;
        await end(job, reason);
        givenUp.push({ job, reason });
        continue;
      }
      const queued = await trx.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', job.dataset_id).where('state', '=', 'queued').executeTakeFirst();
      if (queued) {
        await end(job, 'worker lost; superseded by a queued job');
        await trx.updateTable('conversion_jobs').set({ full: sql<boolean>`"full" or ${job.full}` }).where('id', '=', queued.id).execute();
      } else {
        await trx.updateTable('conversion_jobs').set({ state: 'queued', worker_id: null, heartbeat_at: null, requested_at: now }).where('id', '=', job.id).execute();
      }
      requeued++;
    }
    return { requeued, givenUp };
  });
}

/** Deletes finished jobs (and their tasks) older than `keepDays`; returns how many. */
export async function pruneFinishedJobs(db: Kysely<Database>, now: Date, keepDays: number): Promise<number> {
  const before = new Date(now.getTime() - keepDays * 86_400_000);
  const r = await db.deleteFrom('conversion_jobs').where('state', 'in', ['done', 'failed']).where('finished_at', '<', before).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export function latestJobs(db: Kysely<Database>, datasetId: string, limit = 5): Promise<ConversionJob[]> {
  return db.selectFrom('conversion_jobs').selectAll().where('dataset_id', '=', datasetId).orderBy('id', 'desc').limit(limit).execute();
}
