/**
 * The conversion worker: takes jobs from the database queue one at a time and runs them. Runs inside
 * `nds serve` or alone as `nds worker`; any number of workers can share one PostgreSQL queue.
 *
 * A running job carries its worker's id (`worker-identity.ts`) and a heartbeat, renewed every third of the
 * lease (CONVERSION_LEASE_S). Before each claim a worker reclaims lost jobs: those of a dead process of its
 * own host at once (a killed `nds serve` is running its job again as soon as it restarts), any other whose
 * heartbeat is older than the lease.
 */
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.js';
import { datasetExists } from '../datasets/dataset-queries.js';
import { reportJobFailure, runConversionJob } from './conversion-job.js';
import { SourceError } from './source-checkout.js';
import { observeJob } from './conversion-metrics.js';
import { claimNextJob, finishJob, heartbeat, reclaimLostJobs } from './job-queue.js';
import { ownerIsGone, pidIsAlive, thisProcess, workerIdOf } from './worker-identity.js';

export interface WorkerOptions {
  /** How often to look for work when nothing wakes the worker (ms). */
  pollMs?: number;
  /** A running job whose heartbeat is older than this is taken to be lost and re-queued (ms); default CONVERSION_LEASE_S. */
  leaseMs?: number;
}

export interface RunningWorker {
  /** Looks for work now (called when a job was queued in this process). */
  wake(): void;
  /** Resolves when there is no queued job left and none running here (tests, `backfill --wait`). */
  idle(): Promise<void>;
  /** Finishes the job in hand, then stops. */
  stop(): Promise<void>;
}

export function startWorker(deps: Deps, options: WorkerOptions = {}): RunningWorker {
  const pollMs = options.pollMs ?? 2000;
  const leaseMs = options.leaseMs ?? deps.config.conversionLeaseS * 1000;
  const identity = thisProcess();
  const workerId = workerIdOf(identity, randomBytes(3).toString('hex'));
  const ownerGone = (owner: string | null) => ownerIsGone(owner, identity, pidIsAlive);
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let wakeUp: (() => void) | undefined;
  let idleWaiters: Array<() => void> = [];
  let busy = false;

  async function runOnce(): Promise<boolean> {
    const { db, clock, log } = deps;
    const reclaimed = await reclaimLostJobs(db, clock.now(), leaseMs, ownerGone);
    if (reclaimed > 0) log.warn({ jobs: reclaimed }, 'conversion jobs of a lost worker put back in the queue');
    const job = await claimNextJob(db, workerId, clock.now());
    if (!job) return false;
    busy = true;
    log.info({ job: job.id, dataset: job.dataset_id, ref: job.ref, full: job.full, attempt: job.attempts }, 'conversion started');
    const started = performance.now();
    const beat = setInterval(() => void heartbeat(db, job.id, workerId, clock.now()).catch(() => {}), leaseMs / 3);
    try {
      const result = await runConversionJob(deps, { datasetId: job.dataset_id, ref: job.ref, full: job.full });
      await finishJob(db, job.id, workerId, { state: 'done', result: { ...result } }, clock.now());
      log.info({ job: job.id, dataset: job.dataset_id, stores: result.store_count, failures: result.failure_count, converted: result.converted.length }, 'conversion finished');
      observeJob(deps.metrics, started, 'done');
    } catch (err) {
      log.error({ err, job: job.id, dataset: job.dataset_id }, 'conversion failed');
      observeJob(deps.metrics, started, 'failed');
      await finishJob(db, job.id, workerId, { state: 'failed', error: jobError(err) }, clock.now());
      await reportJobFailure(deps, job.dataset_id, undefined, ownerReason(err)).catch((e) => log.warn({ err: e }, 'could not record the failure'));
    } finally {
      clearInterval(beat);
      await removeCopyIfDeleted(job.dataset_id);
      busy = false;
    }
    return true;
  }

  /** A dataset deleted while its conversion ran: what the job wrote after the deletion is removed now. */
  async function removeCopyIfDeleted(datasetId: string): Promise<void> {
    try {
      if (!(await datasetExists(deps.db, datasetId))) await deps.objects.deletePrefix(`${datasetId}/zarr/`);
    } catch (err) {
      deps.log.warn({ err, dataset: datasetId }, 'could not check for the copy of a deleted dataset');
    }
  }

  const loop = (async () => {
    while (!stopping) {
      let worked = false;
      try {
        worked = await runOnce();
      } catch (err) {
        deps.log.error({ err }, 'conversion worker error');
      }
      if (worked) continue;
      for (const w of idleWaiters) w();
      idleWaiters = [];
      if (stopping) break;
      await new Promise<void>((resolve) => {
        wakeUp = resolve;
        timer = setTimeout(resolve, pollMs);
      });
      wakeUp = undefined;
      clearTimeout(timer);
    }
  })();

  return {
    wake() {
      wakeUp?.();
    },
    idle() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        if (!busy) wakeUp?.();
      });
    },
    async stop() {
      stopping = true;
      wakeUp?.();
      for (const w of idleWaiters) w();
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
