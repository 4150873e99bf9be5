/**
 * The recording tasks of conversion jobs (decision 0024), in the database; this file owns `conversion_tasks`.
 * Any worker takes a queued task of a running, planned job with `FOR UPDATE SKIP LOCKED`, holds it with a
 * heartbeat, and records its outcome; a task whose worker is lost is put back, up to the attempts cap, after
 * which the recording is given up (a failure of the index) so one file cannot hold a dataset back forever.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { ConversionTask } from '../db/conversion-tables.js';
import type { Database } from '../db/types.js';
import type { IndexFailure } from '../formats/zarr/store-index.js';
import type { TaskOutcome } from './job-plan.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function insertTasks(db: Db, jobId: number, tasks: ReadonlyArray<{ position: number; path: string; zarr: string }>): Promise<void> {
  for (let i = 0; i < tasks.length; i += 1000) {
    await db
      .insertInto('conversion_tasks')
      .values(tasks.slice(i, i + 1000).map((t) => ({ job_id: jobId, position: t.position, path: t.path, zarr: t.zarr, state: 'queued' as const })))
      .onConflict((oc) => oc.columns(['job_id', 'position']).doNothing())
      .execute();
  }
}

/**
 * Takes the oldest queued task of a running, planned job (of `jobId` only, when given); `undefined` when
 * there is none. The job's own row is only read here.
 */
export async function claimTask(db: Kysely<Database>, workerId: string, now: Date, jobId?: number): Promise<ConversionTask | undefined> {
  const { rows } = await sql<ConversionTask>`
    update conversion_tasks set state = 'running', attempts = attempts + 1, worker_id = ${workerId}, started_at = ${now}, heartbeat_at = ${now}
    where id = (
      select t.id from conversion_tasks t
      join conversion_jobs j on j.id = t.job_id and j.state = 'running' and j.plan is not null
      where t.state = 'queued' ${jobId === undefined ? sql`` : sql`and t.job_id = ${jobId}`}
      order by t.job_id, t.position
      limit 1
      for update of t skip locked
    )
    returning *`.execute(db);
  return rows[0];
}

/** Marks the task alive; false when this worker no longer holds it (reclaimed, cancelled, or its job gone). */
export async function heartbeatTask(db: Kysely<Database>, taskId: number, workerId: string, now: Date): Promise<boolean> {
  const r = await db.updateTable('conversion_tasks').set({ heartbeat_at: now }).where('id', '=', taskId).where('state', '=', 'running').where('worker_id', '=', workerId).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Puts a task this worker holds back in the queue, to be tried again by any worker (its attempt counted when it
 * was taken). Returns whether it did.
 */
export async function requeueTask(db: Kysely<Database>, taskId: number, workerId: string): Promise<boolean> {
  const r = await db.updateTable('conversion_tasks').set({ state: 'queued', worker_id: null, heartbeat_at: null }).where('id', '=', taskId).where('state', '=', 'running').where('worker_id', '=', workerId).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Records a task's outcome; only its holder's record counts. Returns whether it did. */
export async function finishTask(db: Kysely<Database>, taskId: number, workerId: string, outcome: TaskOutcome, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('conversion_tasks')
    .set({
      state: 'done',
      finished_at: now,
      store: outcome.store ? JSON.stringify(outcome.store) : null,
      failure: outcome.failure ? JSON.stringify(outcome.failure) : null,
    })
    .where('id', '=', taskId)
    .where('state', '=', 'running')
    .where('worker_id', '=', workerId)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Puts back running tasks whose worker is lost (heartbeat older than the lease, or `ownerGone`); one that
 * was started `maxAttempts` times already is given up instead: done, with a failure saying so.
 * Returns how many were put back and how many given up.
 */
export async function reclaimLostTasks(
  db: Kysely<Database>,
  now: Date,
  limits: { leaseMs: number; maxAttempts: number },
  ownerGone: (workerId: string | null) => boolean,
): Promise<{ requeued: number; givenUp: ConversionTask[] }> {
  const cutoff = now.getTime() - limits.leaseMs;
  return db.transaction().execute(async (trx) => {
    const running = await trx.selectFrom('conversion_tasks').selectAll().where('state', '=', 'running').forUpdate().skipLocked().execute();
    const lost = running.filter((t) => t.heartbeat_at === null || t.heartbeat_at.getTime() < cutoff || ownerGone(t.worker_id));
    const givenUp: ConversionTask[] = [];
    for (const task of lost) {
      if (task.attempts >= limits.maxAttempts) {
        const reason = `The conversion of this file stopped its worker ${task.attempts} times (the process died or was lost each time); it was given up.`;
        // The file's (a poison recording, decision 0024): one file that took down every worker given it is the
        // likeliest cause, and trying it again at each conversion would take down as many workers each time.
        const failure: IndexFailure = { path: task.path, zarr: task.zarr, code: 'corrupt_or_truncated', reason, kind: 'file' };
        await trx.updateTable('conversion_tasks').set({ state: 'failed', finished_at: now, failure: JSON.stringify(failure), error: reason }).where('id', '=', task.id).execute();
        givenUp.push(task);
      } else {
        await trx.updateTable('conversion_tasks').set({ state: 'queued', worker_id: null, heartbeat_at: null }).where('id', '=', task.id).execute();
      }
    }
    return { requeued: lost.length - givenUp.length, givenUp };
  });
}

/**
 * The recordings whose stores a job of the dataset may have written and never published: the tasks that
 * started (an attempt) in jobs that ended `failed` (given up, timed out, lost and superseded, or failed whole)
 * after the last job that published the copy (a `done` job that skipped nothing). Jobs of a dataset run one at a
 * time, in the order of their ids. Stores are written in place, so such a store may hold a recording of a commit
 * the index does not name.
 */
export async function unpublishedStores(db: Kysely<Database>, datasetId: string): Promise<Array<{ path: string; zarr: string }>> {
  const { rows } = await sql<{ path: string; zarr: string }>`
    select distinct t.path, t.zarr
    from conversion_tasks t join conversion_jobs j on j.id = t.job_id
    where j.dataset_id = ${datasetId} and j.state = 'failed' and t.attempts > 0
      and j.id > coalesce((
        select max(id) from conversion_jobs
        where dataset_id = ${datasetId} and state = 'done' and (result is null or result->>'skipped' is null)
      ), 0)
    order by t.path`.execute(db);
  return rows;
}

/** Ends the unfinished tasks of a job that ended (failed, timed out, superseded). */
export async function cancelJobTasks(db: Db, jobId: number, reason: string, now: Date): Promise<void> {
  await db.updateTable('conversion_tasks').set({ state: 'failed', finished_at: now, error: reason }).where('job_id', '=', jobId).where('state', 'in', ['queued', 'running']).execute();
}

/** How many tasks of the job are not finished yet (queued or running). */
export async function openTaskCount(db: Kysely<Database>, jobId: number): Promise<number> {
  const row = await db.selectFrom('conversion_tasks').select((eb) => eb.fn.countAll<string>().as('n')).where('job_id', '=', jobId).where('state', 'in', ['queued', 'running']).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Each finished task's outcome, by its position in the plan. */
export async function taskOutcomes(db: Kysely<Database>, jobId: number): Promise<Map<number, TaskOutcome>> {
  const rows = await db.selectFrom('conversion_tasks').select(['position', 'store', 'failure']).where('job_id', '=', jobId).where('state', 'in', ['done', 'failed']).execute();
  const out = new Map<number, TaskOutcome>();
  for (const r of rows) {
    if (r.store) out.set(r.position, { store: r.store as unknown as TaskOutcome['store'] & object });
    else if (r.failure) out.set(r.position, { failure: r.failure as unknown as NonNullable<TaskOutcome['failure']> });
  }
  return out;
}

/** The tasks of a job, for administrators (`nds admin zarr status`). */
export function jobTasks(db: Kysely<Database>, jobId: number): Promise<ConversionTask[]> {
  return db.selectFrom('conversion_tasks').selectAll().where('job_id', '=', jobId).orderBy('position').execute();
}
