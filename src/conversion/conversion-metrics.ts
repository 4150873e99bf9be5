/**
 * What the conversion tells the metrics (`core/metrics.ts`): each recording's duration, outcome and source
 * megabytes a second, each job's duration and outcome, and the queue's depth and oldest waiting job, read at
 * each scrape. Durations are of wall time (`performance.now()`), not of the injected clock: they describe the
 * machine, and no decision depends on them.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../core/clock.js';
import type { Metrics } from '../core/metrics.js';
import type { Database } from '../db/types.js';

/** Records one recording's conversion; `files` are its source files, relative to `dir`. */
export async function observeRecording(metrics: Metrics, dir: string, files: string[], startedMs: number, outcome: 'converted' | 'failed'): Promise<void> {
  const seconds = (performance.now() - startedMs) / 1000;
  metrics.recordingConversions.observe({ outcome }, seconds);
  if (outcome === 'failed') return;
  let bytes = 0;
  for (const f of files) bytes += await stat(path.join(dir, f)).then((s) => s.size, () => 0);
  metrics.conversionSourceBytes.inc(bytes);
  if (seconds > 0) metrics.conversionThroughput.observe(bytes / 1e6 / seconds);
}

/** Records one job, from its claim (`startedMs`, of `performance.now()`) to now. */
export function observeJob(metrics: Metrics, startedMs: number, outcome: 'done' | 'failed'): void {
  metrics.conversionJobs.observe({ outcome }, (performance.now() - startedMs) / 1000);
}

/** Gauges of the queue, read from the database at each scrape: one process of the service need report them. */
export function observeQueue(metrics: Metrics, db: Kysely<Database>, clock: Clock): void {
  const read = async () => {
    const row = await sql<{ depth: number; oldest: Date | null }>`select count(*)::int as depth, min(requested_at) as oldest from conversion_jobs where state = 'queued'`.execute(db);
    const { depth, oldest } = row.rows[0] ?? { depth: 0, oldest: null };
    return { depth, ageS: oldest ? Math.max(0, (clock.now().getTime() - new Date(oldest).getTime()) / 1000) : 0 };
  };
  metrics.gauge('nds_conversion_queue_depth', 'Conversion jobs waiting for a worker', async () => [{ value: (await read()).depth }], { aggregate: 'max' });
  metrics.gauge('nds_conversion_queue_oldest_age_seconds', 'Age of the oldest conversion job waiting for a worker (0 when none waits)', async () => [{ value: (await read()).ageS }], { aggregate: 'max' });
}
