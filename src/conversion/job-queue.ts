/**
 * The conversion job queue, in the database: one queued and one running job per dataset at most.
 * A dispatch while a job waits is coalesced into it; a dispatch while one runs becomes its single follow-up.
 * Workers claim with `FOR UPDATE SKIP LOCKED`, so any number of them can share the queue.
 */
import { sql, type Kysely } from 'kysely';
import type { ConversionJob } from '../db/conversion-tables.js';
import type { Database } from '../db/types.js';

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
    do update set "full" = conversion_jobs."full" or excluded."full", ref = excluded.ref, requested_at = now()
    returning *, (xmax <> 0) as coalesced`.execute(db);
  const { coalesced, ...job } = rows[0];
  return { job, coalesced };
}

/** Takes the oldest queued job whose dataset has none running; `undefined` when there is nothing to do. */
export async function claimNextJob(db: Kysely<Database>, workerId: string, now: Date): Promise<ConversionJob | undefined> {
  try {
    const { rows } = await sql<ConversionJob>`
      update conversion_jobs set state = 'running', started_at = ${now}, heartbeat_at = ${now}, worker_id = ${workerId}, attempts = attempts + 1
      where id = (
        select j.id from conversion_jobs j
        where j.state = 'queued'
          and not exists (select 1 from conversion_jobs r where r.dataset_id = j.dataset_id and r.state = 'running')
        order by j.id
        limit 1
        for update skip locked
      )
      returning *`.execute(db);
    return rows[0];
  } catch (err) {
    // Two workers picked jobs of one dataset at once: the unique index let one through.
    if ((err as { code?: string }).code === '23505') return undefined;
    throw err;
  }
}

/** Marks the job alive; a job this worker no longer owns (it was reclaimed) is left alone. */
export async function heartbeat(db: Kysely<Database>, jobId: number, workerId: string, now: Date): Promise<void> {
  await db.updateTable('conversion_jobs').set({ heartbeat_at: now }).where('id', '=', jobId).where('state', '=', 'running').where('worker_id', '=', workerId).execute();
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

/**
 * Puts back running jobs whose worker is lost, so the re-run finishes the work: those whose heartbeat is
 * older than the lease (a worker anywhere that stopped), and those `ownerGone` names (a process of this host
 * that died: at once, without waiting out the lease). When the dataset already has a queued job, the lost
 * one is closed instead (the queued one covers it). Returns how many were put back or closed.
 */
export async function reclaimLostJobs(db: Kysely<Database>, now: Date, leaseMs: number, ownerGone: (workerId: string | null) => boolean): Promise<number> {
  const cutoff = now.getTime() - leaseMs;
  return db.transaction().execute(async (trx) => {
    const running = await trx.selectFrom('conversion_jobs').selectAll().where('state', '=', 'running').forUpdate().skipLocked().execute();
    const lost = running.filter((job) => job.heartbeat_at === null || job.heartbeat_at.getTime() < cutoff || ownerGone(job.worker_id));
    for (const job of lost) {
      const queued = await trx.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', job.dataset_id).where('state', '=', 'queued').executeTakeFirst();
      if (queued) {
        await trx.updateTable('conversion_jobs').set({ state: 'failed', finished_at: now, error: 'worker lost; superseded by a queued job' }).where('id', '=', job.id).execute();
        await trx.updateTable('conversion_jobs').set({ full: sql<boolean>`"full" or ${job.full}` }).where('id', '=', queued.id).execute();
      } else {
        await trx.updateTable('conversion_jobs').set({ state: 'queued', worker_id: null, heartbeat_at: null }).where('id', '=', job.id).execute();
      }
    }
    return lost.length;
  });
}

export function latestJobs(db: Kysely<Database>, datasetId: string, limit = 5): Promise<ConversionJob[]> {
  return db.selectFrom('conversion_jobs').selectAll().where('dataset_id', '=', datasetId).orderBy('id', 'desc').limit(limit).execute();
}
