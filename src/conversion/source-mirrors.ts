/**
 * A worker's mirrors of dataset sources (`<DATA_DIR>/sources/<id>.git`, `source-checkout.ts`) go with their
 * dataset. The deletion runs on an API node, which cannot reach a worker's disk: it announces itself on
 * `DATASET_DELETED_CHANNEL` (PostgreSQL), and each worker then removes the mirrors on its disk whose dataset is
 * gone. The in-process worker of `nds serve` removes one at once (the deletion's hook), a worker's job or task
 * of a dataset deleted under it removes the mirror once it stops, and every worker looks when it starts and
 * every hour, so one that was down at the deletion, or lost the announcement, cleans up too.
 *
 * Dataset ids come from a sequence and are never given twice, and a conversion mirrors only a dataset it read
 * from the database: a mirror whose dataset is gone is only left over, never one a new dataset is making.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Deps } from '../deps.js';
import { runPeriodically } from '../core/periodic.js';
import { DATASET_ID } from '../datasets/dataset-access.js';
import { datasetExists, existingDatasetIds } from '../datasets/dataset-queries.js';
import { sourceMirrorDir } from './zarr-ready.js';

type MirrorDeps = Pick<Deps, 'db' | 'config' | 'log'>;

/** Ids looked up in one statement: far below PostgreSQL's bound on a statement's parameters. */
const IDS_A_STATEMENT = 5000;

/** Removes the mirror of `datasetId` when the dataset no longer exists; a dataset that exists keeps it. */
export async function removeMirrorIfDeleted(deps: MirrorDeps, datasetId: string): Promise<void> {
  if (!DATASET_ID.test(datasetId) || (await datasetExists(deps.db, datasetId))) return;
  await rm(sourceMirrorDir(deps.config.dataDir, datasetId), { recursive: true, force: true });
}

/** The dataset ids of the mirrors on this process's disk. */
async function mirroredIds(dataDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(path.join(dataDir, 'sources'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => n.endsWith('.git')).map((n) => n.slice(0, -'.git'.length)).filter((id) => DATASET_ID.test(id));
}

/** Removes every mirror on this process's disk whose dataset no longer exists; returns how many. */
export async function removeMirrorsOfDeletedDatasets(deps: MirrorDeps): Promise<number> {
  // Listed before the look-up: a mirror listed was made for a dataset that existed before it, so one the
  // look-up does not find is of a dataset deleted since.
  const ids = await mirroredIds(deps.config.dataDir);
  const existing = new Set<string>();
  for (let i = 0; i < ids.length; i += IDS_A_STATEMENT) {
    for (const id of await existingDatasetIds(deps.db, ids.slice(i, i + IDS_A_STATEMENT))) existing.add(id);
  }
  let removed = 0;
  for (const id of ids) {
    if (existing.has(id)) continue;
    await rm(sourceMirrorDir(deps.config.dataDir, id), { recursive: true, force: true });
    removed++;
  }
  if (removed > 0) deps.log.info({ removed }, 'source mirrors of deleted datasets removed');
  return removed;
}

export interface MirrorSweeper {
  /** Sweeps soon (a deletion was announced); requests made while one waits to run are one sweep. */
  soon(): void;
  stop(): Promise<void>;
}

export interface MirrorSweeperOptions {
  /** How often to sweep besides at start and when told (ms). */
  intervalMs: number;
  /** Subscribes to announcements of deleted datasets (PostgreSQL `LISTEN`); returns the unsubscribe. */
  listen?: (announced: () => void) => Promise<() => Promise<void>>;
}

/** Sweeps at start, every `intervalMs`, and after each deletion announced to `listen`. */
export function startMirrorSweeper(deps: MirrorDeps, options: MirrorSweeperOptions): MirrorSweeper {
  let waiting = false;
  const round = async () => {
    waiting = false;
    await removeMirrorsOfDeletedDatasets(deps).catch((err: unknown) => deps.log.warn({ err }, 'removing source mirrors of deleted datasets failed'));
  };
  const periodic = runPeriodically(round, options.intervalMs, { startNow: false });
  void periodic.tick();
  const soon = () => {
    if (waiting) return;
    waiting = true;
    void periodic.tick();
  };
  const unlisten = options.listen?.(soon).catch((err: unknown) => {
    deps.log.warn({ err }, 'could not listen for deleted datasets; their source mirrors go at the next hourly sweep');
    return undefined;
  });
  return {
    soon,
    async stop() {
      const close = await unlisten;
      await close?.().catch(() => {});
      await periodic.stop();
    },
  };
}
