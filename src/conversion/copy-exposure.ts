/**
 * What a dataset's Zarr copy shows at the object store's anonymous public base follows its visibility
 * (decision 0016). A public dataset's objects are tagged public-read and its `index.json` names the public
 * base as `data_base`; a private or sandbox dataset's objects are not, and its `index.json` names none.
 *
 * A visibility change wants a sweep of the whole copy (a database trigger, in the same statement), a finished
 * conversion of a public dataset a sweep of the stores it wrote; `sweepCopy` does what is wanted, holding the
 * copy's lease, until nothing more is. Sweeps are idempotent: one that crashed is done again by the next
 * `sweepCopy` of the copy, or by the process's sweeper (`startCopySweeper`) once its lease has expired.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { datasetVisibility, replaceZarrIndexEtag } from '../datasets/dataset-queries.js';
import { mapLimit } from '../core/map-limit.js';
import { runPeriodically, type Periodic } from '../core/periodic.js';
import { readStoreIndex, storeIndexKey, writeStoreIndex } from '../formats/zarr/store-index-object.js';
import { findSweepWant, finishSweepWant, listDueSweeps, releaseCopyLease, takeCopyLease, wantSweep } from './copy-exposure-queries.js';

type ExposureDeps = Pick<Deps, 'db' | 'objects' | 'config' | 'clock' | 'log'>;

/** A lease outlives its holder by this much at most: then another process takes the copy over. */
const LEASE_MS = 60_000;
/** Objects tagged between two renewals of the lease and two looks at the dataset's visibility. */
const PAGE = 256;
const TAGGING_CONCURRENCY = 16;
const POLL_MS = 100;

/**
 * Where the copy's objects can be read without the gateway: ZARR_PUBLIC_BASE_URL when set (a CDN, a bucket
 * website), else the object store's own public base: the folder store's `/objects/` route of this server, or
 * the S3 bucket's path-style URL (objects tagged public-read). Named in `index.json` for public datasets only.
 */
export function publicDataBase(deps: Pick<Deps, 'config' | 'objects'>, datasetId: string): string {
  const { config, objects } = deps;
  if (config.zarrPublicBaseUrl) return `${config.zarrPublicBaseUrl}/${datasetId}/zarr`;
  return objects.publicUrl(`${datasetId}/zarr`);
}

/** Wants a sweep of `scope` (paths under `<id>/zarr/`, `/`-ended for folders; null: the whole copy). */
export async function wantCopySweep(deps: Pick<Deps, 'db'>, datasetId: string, scope: string[] | null): Promise<void> {
  await wantSweep(deps.db, datasetId, scope);
}

/**
 * Runs `fn` holding the copy's lease (renewed by `renew`), waiting up to `waitMs` for it. Throws
 * `service_unavailable` when the wait ends first; returns undefined when the dataset no longer exists.
 */
export async function withCopyLease<T>(deps: ExposureDeps, datasetId: string, waitMs: number, fn: (renew: () => Promise<void>) => Promise<T>): Promise<T | undefined> {
  const holder = randomUUID();
  const deadline = Date.now() + waitMs;
  for (;;) {
    const taken = await takeLease(deps, datasetId, holder);
    if (taken === undefined) return undefined;
    if (taken) break;
    if (Date.now() >= deadline) throw new NdsError('service_unavailable', { message: `The Zarr copy of ${datasetId} is being swept; try again shortly.` });
    await sleep(POLL_MS);
  }
  const renew = async () => {
    if ((await takeLease(deps, datasetId, holder)) !== true) throw new Error(`the lease of ${datasetId}'s copy was lost`);
  };
  try {
    return await fn(renew);
  } finally {
    await releaseCopyLease(deps.db, datasetId, holder);
  }
}

function takeLease(deps: ExposureDeps, datasetId: string, holder: string): Promise<boolean | undefined> {
  const now = deps.clock.now();
  return takeCopyLease(deps.db, datasetId, holder, now, new Date(now.getTime() + LEASE_MS));
}

/**
 * Does every sweep wanted of the copy. With `waitMs`, waits that long for another holder to finish (the
 * caller needs the copy settled: a visibility change answers only then); without, leaves a held copy to its
 * holder, who sweeps whatever is wanted before letting go. Never throws: a failure is logged, and the want
 * stays for the next try.
 */
export async function sweepCopy(deps: ExposureDeps, datasetId: string, options: { waitMs?: number } = {}): Promise<void> {
  try {
    const deadline = Date.now() + (options.waitMs ?? 0);
    for (;;) {
      const want = await findSweepWant(deps.db, datasetId);
      if (!want || want.wantSeq <= want.doneSeq) return;
      const holder = randomUUID();
      const taken = await takeLease(deps, datasetId, holder);
      if (taken === undefined) return;
      if (taken) {
        try {
          await sweepWhileWanted(deps, datasetId, async () => {
            if ((await takeLease(deps, datasetId, holder)) !== true) throw new Error(`the lease of ${datasetId}'s copy was lost`);
          });
        } finally {
          await releaseCopyLease(deps.db, datasetId, holder);
        }
        // A want that came while the lease was being given back finds nobody holding it: look again.
        continue;
      }
      if (Date.now() >= deadline) {
        if (options.waitMs) deps.log.warn({ dataset: datasetId }, 'copy sweep still held by another process; its holder or the sweeper finishes it');
        return;
      }
      await sleep(POLL_MS);
    }
  } catch (err) {
    deps.log.warn({ err, dataset: datasetId }, 'copy sweep failed; it is tried again');
  }
}

async function sweepWhileWanted(deps: ExposureDeps, datasetId: string, renew: () => Promise<void>): Promise<void> {
  for (;;) {
    const want = await findSweepWant(deps.db, datasetId);
    if (!want || want.wantSeq <= want.doneSeq) return;
    const outcome = await sweepOnce(deps, datasetId, want.scope, renew);
    if (outcome === 'gone') return;
    // A visibility change during the sweep wanted the whole copy again: the next round does it.
    if (outcome === 'done' && (await finishSweepWant(deps.db, datasetId, want.wantSeq))) return;
  }
}

/**
 * One pass: private copies lose `data_base` first (the entry point) and then every object's tag; public
 * copies tag their objects first and name `data_base` last, so a reader who finds it finds them readable.
 */
async function sweepOnce(deps: ExposureDeps, datasetId: string, scope: string[] | null, renew: () => Promise<void>): Promise<'done' | 'changed' | 'gone'> {
  const { db, objects } = deps;
  const visibility = await datasetVisibility(db, datasetId);
  if (visibility === undefined) return 'gone';
  const isPublic = visibility === 'public';
  const indexKey = storeIndexKey(datasetId);
  if (!isPublic) await settleIndex(deps, datasetId, false);
  const setPublicRead = objects.setPublicRead?.bind(objects);
  if (setPublicRead) {
    let page: string[] = [];
    const flush = async (): Promise<boolean> => {
      await mapLimit(page, TAGGING_CONCURRENCY, (key) => setPublicRead(key, isPublic));
      page = [];
      await renew();
      return (await datasetVisibility(db, datasetId)) === visibility;
    };
    for await (const key of keysIn(deps, datasetId, scope)) {
      if (key === indexKey) continue;
      page.push(key);
      if (page.length === PAGE && !(await flush())) return 'changed';
    }
    if (!(await flush())) return 'changed';
  }
  if (isPublic) await settleIndex(deps, datasetId, true);
  return 'done';
}

/** The keys of `scope` under the copy: every object of a `/`-ended folder, a path as it is. */
async function* keysIn(deps: ExposureDeps, datasetId: string, scope: string[] | null): AsyncIterable<string> {
  const prefix = `${datasetId}/zarr/`;
  for (const part of scope ?? ['']) {
    if (part === '' || part.endsWith('/')) {
      for await (const info of deps.objects.list(prefix + part)) yield info.key;
    } else {
      yield prefix + part;
    }
  }
}

/** `index.json` names the public base exactly when the copy is public, and is public-read exactly then. */
async function settleIndex(deps: ExposureDeps, datasetId: string, isPublic: boolean): Promise<void> {
  const { objects } = deps;
  const key = storeIndexKey(datasetId);
  const before = await objects.head(key);
  if (!before) return;
  let index;
  try {
    index = await readStoreIndex(objects, datasetId);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    deps.log.warn({ err, dataset: datasetId }, 'index.json is damaged: left as it is, and not public');
    await objects.setPublicRead?.(key, false);
    return;
  }
  if (!index) return;
  const dataBase = isPublic ? publicDataBase(deps, datasetId) : null;
  if (index.data_base === dataBase) {
    await objects.setPublicRead?.(key, isPublic);
    return;
  }
  const written = await writeStoreIndex(objects, datasetId, { ...index, data_base: dataBase }, { publicRead: isPublic });
  await replaceZarrIndexEtag(deps.db, datasetId, before.etag, written.etag);
}

/** Its `tick` sweeps now whatever is due, after the round under way (the timer does it every interval). */
export type CopySweeper = Periodic;

/**
 * Sweeps, every `intervalMs` and once at start, the copies whose wanted sweep no live process holds: one a
 * crash interrupted (after its lease expired), or one whose sweep failed. `stop` waits for the round under
 * way (the one at start included), which ends after the copy it is sweeping.
 */
export function startCopySweeper(deps: ExposureDeps, intervalMs: number): CopySweeper {
  return runPeriodically(async (stopped) => {
    try {
      // Every due copy once a round, a hundred at a time (after an upgrade, every converted copy is due).
      const tried = new Set<string>();
      for (;;) {
        const due = (await listDueSweeps(deps.db, deps.clock.now(), 100 + tried.size)).filter((id) => !tried.has(id));
        if (due.length === 0) return;
        for (const id of due) {
          if (stopped()) return;
          tried.add(id);
          await sweepCopy(deps, id);
        }
      }
    } catch (err) {
      deps.log.warn({ err }, 'copy sweeper could not list due sweeps');
    }
  }, intervalMs);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
