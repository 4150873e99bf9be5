/**
 * The conversion worker: takes work from the database queue one piece at a time and runs it. Runs inside
 * `nds serve` or alone as `nds worker`; any number of workers can share one PostgreSQL queue.
 *
 * Work comes in two kinds (decision 0024). A job is planned by the worker that claims it, which then
 * converts the job's recording tasks alongside any other worker, waits for the last one and publishes the
 * index. A task of any running job is taken by any idle worker. Each piece carries its worker's id
 * (`worker-identity.ts`) and a heartbeat, renewed every third of the lease (CONVERSION_LEASE_S). Before each
 * claim a worker reclaims lost work (a dead process of its own host at once, any other past the lease), gives
 * up what was started CONVERSION_MAX_ATTEMPTS times or ran past CONVERSION_MAX_S, and hourly prunes finished
 * jobs older than CONVERSION_JOBS_KEEP_DAYS. It wakes on `LISTEN` where the database has it, polls otherwise.
 */
import { randomBytes } from 'node:crypto';
import { NoResultError, type Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import type { ConversionJob, ConversionTask } from '../db/conversion-tables.js';
import { datasetExists, lockDatasetRow, settlePendingAsReady } from '../datasets/dataset-queries.js';
import { askedSincePlanned, checkoutForConversion, checkoutForJob, planConversionJob, publishConversion, reportJobFailure, StaleDelivery, type JobRequest } from './conversion-job.js';
import { dispatchConversion } from './dispatch.js';
import { plannedTasks, type StoredPlan } from './job-plan.js';
import { SourceError } from './source-checkout.js';
import { observeJob } from './conversion-metrics.js';
import { announceWork, claimNextJob, countPublishAttempt, finishJob, hasQueuedJob, heartbeat, jobPlan, planJob, pruneFinishedJobs, reclaimLostJobs, type QueueLimits } from './job-queue.js';
import type { OpenSource } from './recording-conversions.js';
import { convertOneRecording } from './recording-conversions.js';
import { StoreWriteError, WriteFenced, type WriteFence } from './object-store-sink.js';
import { removeMirrorIfDeleted } from './source-mirrors.js';
import { claimTask, finishTask, heartbeatTask, openTaskCount, reclaimLostTasks, requeueTask, taskOutcomes } from './task-queue.js';
import { ownerIsGone, pidIsAlive, thisProcess, workerIdOf } from './worker-identity.js';

export interface WorkerOptions {
  /** How often to look for work when nothing wakes the worker (ms). */
  pollMs?: number;
  /** A running job whose heartbeat is older than this is taken to be lost and re-queued (ms); default CONVERSION_LEASE_S. */
  leaseMs?: number;
  /** Subscribes to announcements of new work (PostgreSQL `LISTEN`); returns the unsubscribe. */
  listen?: (wake: () => void) => Promise<() => Promise<void>>;
}

export interface RunningWorker {
  /** Looks for work now (called when a job was queued in this process). */
  wake(): void;
  /** Resolves when there is no queued job left and none running here (tests, `backfill --wait`). */
  idle(): Promise<void>;
  /** Finishes the piece of work in hand, then stops. */
  stop(): Promise<void>;
}

/** How often a worker prunes finished jobs. */
const PRUNE_EVERY_MS = 3_600_000;

/** A job's work taken from this worker (reclaimed, given up, its dataset deleted): it stops working on it. */
class JobTaken extends Error {}

/** How long a task's renewal vouches for its writes: past this, the next write asks the queue again. */
const FENCE_CONFIRMED_MS = 1000;

export function startWorker(deps: Deps, options: WorkerOptions = {}): RunningWorker {
  const pollMs = options.pollMs ?? 2000;
  const limits: QueueLimits = {
    leaseMs: options.leaseMs ?? deps.config.conversionLeaseS * 1000,
    maxAttempts: deps.config.conversionMaxAttempts,
    maxS: deps.config.conversionMaxS,
  };
  const identity = thisProcess();
  const workerId = workerIdOf(identity, randomBytes(3).toString('hex'));
  const ownerGone = (owner: string | null) => ownerIsGone(owner, identity, pidIsAlive);
  const { db, clock, log } = deps;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  /** Callers of `idle()`, with the number of passes begun when they asked: only a later pass that found nothing answers them. */
  let idleWaiters: Array<{ after: number; resolve: () => void }> = [];
  let passes = 0;
  let busy = false;
  let prunedAt = 0;
  /**
   * Checkouts of the sources this worker converts tasks of, by dataset and commit (`sourceKey`): kept for its
   * further tasks of the same job, removed when its job is done here, when it takes a task of another source,
   * or when it runs out of work.
   */
  const sources = new Map<string, Promise<OpenSource>>();
  const sourceKey = (datasetId: string, commit: string) => `${datasetId}@${commit}`;

  /** Sleeps until woken or `ms` passed. */
  async function rest(ms: number): Promise<void> {
    if (woken) {
      woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      wakeUp = resolve;
      timer = setTimeout(resolve, ms);
    });
    wakeUp = undefined;
    woken = false;
    clearTimeout(timer);
  }

  /** Reclaims lost work, ends what was given up (telling the owner why), prunes old jobs now and then. */
  async function housekeeping(): Promise<void> {
    const now = clock.now();
    const tasks = await reclaimLostTasks(db, now, limits, ownerGone);
    if (tasks.requeued > 0) log.warn({ tasks: tasks.requeued }, 'recording tasks of a lost worker put back in the queue');
    for (const t of tasks.givenUp) log.error({ task: t.id, job: t.job_id, path: t.path, attempts: t.attempts }, 'recording task given up');
    const jobs = await reclaimLostJobs(db, now, limits, ownerGone);
    if (jobs.requeued > 0) log.warn({ jobs: jobs.requeued }, 'conversion jobs of a lost worker put back in the queue');
    for (const { job, reason } of jobs.givenUp) {
      log.error({ job: job.id, dataset: job.dataset_id, attempts: job.attempts, reason }, 'conversion job given up');
      await reportJobFailure(deps, job.dataset_id, job.plan ? (job.plan as unknown as StoredPlan).commit : undefined, reason).catch((e) => log.warn({ err: e }, 'could not record the failure'));
    }
    if (now.getTime() - prunedAt >= PRUNE_EVERY_MS) {
      prunedAt = now.getTime();
      const pruned = await pruneFinishedJobs(db, now, deps.config.conversionJobsKeepDays);
      if (pruned > 0) log.info({ jobs: pruned }, 'finished conversion jobs pruned');
    }
  }

  /** The checkout of `datasetId` at `commit` (a planned commit), made on first use; others this worker held are removed. */
  async function sourceOf(datasetId: string, commit: string): Promise<OpenSource> {
    const key = sourceKey(datasetId, commit);
    // One task at a time: a checkout of another source is of a job this worker no longer works on.
    for (const other of [...sources.keys()]) if (other !== key) await dropSource(other);
    let source = sources.get(key);
    if (!source) {
      source = checkoutForConversion(deps, datasetId, commit);
      sources.set(key, source);
      source.catch(() => sources.delete(key));
    }
    return source;
  }

  async function dropSource(key: string): Promise<void> {
    const source = sources.get(key);
    sources.delete(key);
    await source?.then((s) => s.checkout.cleanup()).catch(() => {});
  }

  /** The plan of the job whose tasks this worker last took: a plan never changes once stored, and a big one is megabytes. */
  let lastPlan: { jobId: number; planned: NonNullable<Awaited<ReturnType<typeof jobPlan>>> } | undefined;
  async function planOf(jobId: number) {
    if (lastPlan?.jobId === jobId) return lastPlan.planned;
    const planned = await jobPlan(db, jobId);
    lastPlan = planned ? { jobId, planned } : undefined;
    return planned;
  }

  /**
   * Converts one recording task and records its outcome. `announce`: tell the other workers it finished (the
   * job's own worker may be waiting for it); a task of the job this worker runs itself wakes nobody.
   */
  async function runTask(task: ConversionTask, announce: boolean): Promise<void> {
    const fence = taskFence(task);
    try {
      const planned = await planOf(task.job_id);
      const recording = planned?.plan.recordings[task.position];
      if (!planned || !recording) return;
      log.info({ task: task.id, job: task.job_id, dataset: planned.datasetId, path: recording.path, attempt: task.attempts }, 'recording conversion started');
      let outcome;
      try {
        const source = await sourceOf(planned.datasetId, planned.plan.commit).catch((err: unknown) => {
          throw err instanceof SourceError ? err : new StoreWriteError(`the checkout of ${planned.plan.commit}`, err);
        });
        if (source.checkout.commit !== planned.plan.commit) throw new SourceError(`the source no longer has the planned commit ${planned.plan.commit}`);
        outcome = await convertOneRecording(deps, planned.datasetId, source, recording, fence);
      } catch (err) {
        if (err instanceof WriteFenced) {
          log.warn({ task: task.id, job: task.job_id, dataset: planned.datasetId, path: recording.path }, 'recording task taken back from this worker (its lease lapsed, or its dataset deleted); its writes stopped');
          await removeCopyIfDeleted(planned.datasetId);
          return;
        }
        // A fault of the moment (the store refused a write, the checkout failed), not of the file: the task
        // goes back to the queue while it has attempts left, for this worker or another to try again.
        if (err instanceof StoreWriteError && task.attempts < limits.maxAttempts) {
          log.warn({ err, task: task.id, job: task.job_id, attempt: task.attempts }, 'recording task failed for a reason of the moment; queued again');
          if ((await requeueTask(db, task.id, workerId)) && announce) await announceWork(db);
          return;
        }
        log.error({ err, task: task.id, job: task.job_id }, 'recording task failed');
        const reason =
          err instanceof SourceError
            ? err.message
            : err instanceof StoreWriteError
              ? `The conversion of this file failed ${task.attempts} times for reasons of the service, not of the file (last: ${err.message}); the next conversion tries it again.`
              : 'The source could not be read for this recording.';
        // The file's own failures are the outcomes `convertOneRecording` returns; what it threw (a store that
        // refused writes, a checkout that failed, a file the checkout could not list) is the service's.
        outcome = { failure: { path: recording.path, zarr: recording.zarr, code: 'file_read_error' as const, reason, kind: 'service' as const } };
      }
      if (await finishTask(db, task.id, workerId, outcome, clock.now())) {
        if (announce) await announceWork(db);
      } else {
        // Not this worker's any more (taken back, or its dataset deleted): what it wrote of a deleted dataset goes.
        await removeCopyIfDeleted(planned.datasetId);
      }
    } finally {
      fence.stop();
    }
  }

  /**
   * The hold of a running task, renewed every third of the lease. It is lost when a renewal finds the task
   * another's, or when no renewal has succeeded for a whole lease (the queue may have taken it back meanwhile).
   */
  function taskFence(task: ConversionTask): WriteFence & { stop(): void } {
    let lost = false;
    let confirmedAt = performance.now();
    const renew = async () => {
      if (lost) return false;
      if (await heartbeatTask(db, task.id, workerId, clock.now())) confirmedAt = performance.now();
      else lost = true;
      return !lost;
    };
    const beat = setInterval(() => {
      renew().catch(() => {
        if (performance.now() - confirmedAt > limits.leaseMs) lost = true;
      });
    }, limits.leaseMs / 3);
    return {
      held: async ({ fresh } = {}) => {
        if (lost) return false;
        if (!fresh && performance.now() - confirmedAt < FENCE_CONFIRMED_MS) return true;
        return renew();
      },
      stop: () => clearInterval(beat),
    };
  }

  /** Plans the job (unless a lost run did), converts its tasks with the other workers, then publishes. */
  async function runJob(job: ConversionJob): Promise<void> {
    const started = performance.now();
    let owned = true;
    let confirmedAt = performance.now();
    const renew = async () => {
      if (owned && (await heartbeat(db, job.id, workerId, clock.now()))) confirmedAt = performance.now();
      else owned = false;
      return owned;
    };
    // A renewal that fails for a whole lease loses the job too: the queue may have taken it back meanwhile.
    const beat = setInterval(() => {
      renew().catch(() => {
        if (performance.now() - confirmedAt > limits.leaseMs) owned = false;
      });
    }, limits.leaseMs / 3);
    const jobFence: WriteFence = { held: () => renew() };
    const checkOwned = () => {
      if (!owned) throw new JobTaken();
      if (job.started_at && clock.now().getTime() - job.started_at.getTime() > limits.maxS * 1000) throw new JobTaken();
    };
    let commit: string | undefined;
    const req: JobRequest = { datasetId: job.dataset_id, ref: job.ref, full: job.full, reason: job.reason };
    // A dispatch merged into this job while it waited with a plan (reclaimed from a lost worker) is not in that
    // plan: it is queued once the plan has run, whatever its outcome.
    const merged = job.plan ? askedSincePlanned(job.plan as unknown as StoredPlan, req) : undefined;
    const queueMerged = async () => {
      if (!merged) return;
      await dispatchConversion(deps, { ...merged, reason: merged.reason ?? 'follow-up' }).catch((err: unknown) => log.warn({ err, dataset: job.dataset_id }, 'could not queue the conversion merged into a reclaimed job'));
    };
    try {
      let plan = job.plan as unknown as StoredPlan | null;
      if (!plan) {
        for (const key of [...sources.keys()]) await dropSource(key);
        const source = await checkoutForJob(deps, req);
        commit = source.checkout.commit;
        // Kept for this worker's own tasks of the job.
        sources.set(sourceKey(job.dataset_id, commit), Promise.resolve(source));
        plan = await planConversionJob(deps, req, source);
        const tasks = plannedTasks(plan);
        checkOwned();
        if (!(await planJob(db, job.id, workerId, plan, tasks))) throw new JobTaken();
        log.info({ job: job.id, dataset: job.dataset_id, commit: plan.commit, tasks: tasks.length, recordings: plan.recordings.length }, 'conversion planned');
      }
      commit = plan.commit;
      for (;;) {
        checkOwned();
        const task = await claimTask(db, workerId, clock.now(), job.id);
        if (task) {
          // The one waiting for this job's tasks is this worker: no announcement (a round trip a task).
          await runTask(task, false);
          continue;
        }
        if ((await openTaskCount(db, job.id)) === 0) break;
        // Other workers hold the rest: wait for them (a task finished is announced), and take back lost ones.
        await rest(Math.min(pollMs, 1000));
        await housekeeping();
      }
      checkOwned();
      if (!(await countPublishAttempt(db, job.id, workerId))) throw new JobTaken();
      const result = await publishConversion(deps, job.dataset_id, plan, await taskOutcomes(db, job.id), jobFence);
      await finishJob(db, job.id, workerId, { state: 'done', result: { ...result } }, clock.now());
      log.info({ job: job.id, dataset: job.dataset_id, stores: result.store_count, failures: result.failure_count, converted: result.converted.length }, 'conversion finished');
      observeJob(deps.metrics, started, 'done');
      await queueMerged();
    } catch (err) {
      if (err instanceof StaleDelivery) {
        // Nothing was written: the copy is main's already, and the job is done, not failed.
        log.info({ job: job.id, dataset: job.dataset_id, commit: err.commit, main: err.main }, "a push's delivery skipped: the copy is of main already");
        await finishJob(db, job.id, workerId, { state: 'done', result: { skipped: 'stale_delivery', commit: err.commit, main: err.main } }, clock.now());
        // Its dispatch made the dataset `pending`; unless another conversion waits, the copy of main is `ready` again.
        await settlePendingUnlessQueued(db, job.dataset_id, clock.now());
        observeJob(deps.metrics, started, 'done');
        return;
      }
      if (err instanceof JobTaken || err instanceof WriteFenced) {
        log.warn({ job: job.id, dataset: job.dataset_id }, 'conversion job taken from this worker (given up, reclaimed or deleted); left as it is');
        return;
      }
      log.error({ err, job: job.id, dataset: job.dataset_id }, 'conversion failed');
      observeJob(deps.metrics, started, 'failed');
      await finishJob(db, job.id, workerId, { state: 'failed', error: jobError(err) }, clock.now());
      await reportJobFailure(deps, job.dataset_id, commit, ownerReason(err)).catch((e) => log.warn({ err: e }, 'could not record the failure'));
      await queueMerged();
    } finally {
      clearInterval(beat);
      // The job is over here: the checkouts of its dataset go.
      for (const key of [...sources.keys()]) if (key.startsWith(`${job.dataset_id}@`)) await dropSource(key);
      await removeCopyIfDeleted(job.dataset_id);
    }
  }

  async function runOnce(): Promise<boolean> {
    await housekeeping();
    const task = await claimTask(db, workerId, clock.now());
    if (task) {
      busy = true;
      try {
        await runTask(task, true);
      } finally {
        busy = false;
      }
      return true;
    }
    const job = await claimNextJob(db, workerId, clock.now());
    if (!job) {
      for (const id of [...sources.keys()]) await dropSource(id);
      return false;
    }
    busy = true;
    log.info({ job: job.id, dataset: job.dataset_id, ref: job.ref, full: job.full, attempt: job.attempts, planned: job.plan !== null }, 'conversion started');
    try {
      await runJob(job);
    } finally {
      busy = false;
    }
    return true;
  }

  /**
   * A dataset deleted while its conversion ran: what the job wrote after the deletion is removed now, and the
   * mirror of its source, which a fetch under way may have made again after the deletion removed it.
   */
  async function removeCopyIfDeleted(datasetId: string): Promise<void> {
    try {
      if (await datasetExists(deps.db, datasetId)) return;
      await deps.objects.deletePrefix(`${datasetId}/zarr/`);
      await removeMirrorIfDeleted(deps, datasetId);
    } catch (err) {
      deps.log.warn({ err, dataset: datasetId }, 'could not check for the copy of a deleted dataset');
    }
  }

  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  const unlisten = options.listen?.(wake).catch((err: unknown) => {
    log.warn({ err }, 'could not listen for queued conversions; polling only');
    return undefined;
  });

  const loop = (async () => {
    while (!stopping) {
      let worked = false;
      const pass = ++passes;
      try {
        worked = await runOnce();
      } catch (err) {
        deps.log.error({ err }, 'conversion worker error');
      }
      if (worked) continue;
      // A pass that began before a caller asked may have missed the job it queued: that caller waits for the next.
      for (const w of idleWaiters.filter((w) => w.after < pass)) w.resolve();
      idleWaiters = idleWaiters.filter((w) => w.after >= pass);
      if (stopping) break;
      await rest(pollMs);
    }
    const close = await unlisten;
    await close?.().catch(() => {});
  })();

  return {
    wake,
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push({ after: passes, resolve });
        if (!busy) wake();
      });
    },
    async stop() {
      stopping = true;
      wake();
      for (const w of idleWaiters) w.resolve();
      idleWaiters = [];
      await loop;
    },
  };
}

/** What the job's row keeps for administrators: the failure with its cause (git's own words, paths included). */
function jobError(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  const cause = (err as Error)?.cause;
  return cause instanceof Error && !message.includes(cause.message) ? `${message} (${cause.message})` : message;
}

/** What the dataset's owner is told (`zarr_error`): a source's reason as written for them; nothing of an internal failure. */
function ownerReason(err: unknown): string {
  if (err instanceof SourceError) return err.message;
  return 'The conversion failed unexpectedly; an administrator can see why in the conversion jobs (nds admin zarr status).';
}

/**
 * `pending` back to `ready` when no conversion of the dataset waits, under the dataset row's lock: a dispatch
 * sets `pending` after it enqueues, so one that enqueues between the check and the write waits for the lock and
 * sets `pending` after this; without the lock it was overwritten with `ready` while its job waited.
 */
export async function settlePendingUnlessQueued(db: Kysely<Database>, datasetId: string, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    try {
      await lockDatasetRow(trx, datasetId);
    } catch (err) {
      if (err instanceof NoResultError) return; // the dataset is gone: nothing to settle
      throw err;
    }
    if (!(await hasQueuedJob(trx, datasetId))) await settlePendingAsReady(trx, datasetId, now);
  });
}
