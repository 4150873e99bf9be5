/**
 * One conversion of a dataset's Zarr copy (the `generate-zarr` job): check the source out at `ref`, compare
 * with the commit recorded in `index.json`, convert the recordings whose data or sidecars changed, write their
 * stores in place (chunks first, metadata last, stale chunks removed after), delete stores whose source is
 * gone, write `index.json` last, and report through the zarr-ready callback. A crash at any point leaves the
 * previous `index.json` and its stores readable; a re-run finishes the work.
 */
import path from 'node:path';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { findRecordings, type FoundRecording } from '../formats/bids/find-recordings.js';
import { folderLister } from '../formats/bids/sidecar-files.js';
import { convertRecording, failureOf } from '../formats/convert-recording.js';
import { buildStoreIndex, type IndexFailure, type IndexStore } from '../formats/zarr/store-index.js';
import { ObjectStoreSink } from './object-store-sink.js';
import { changedPaths, checkoutSource, listFolder, SourceError, type SourceCheckout } from './source-checkout.js';
import { recordZarrReady, type ZarrReadyPayload } from './zarr-ready.js';

export interface JobRequest {
  datasetId: string;
  ref: string;
  full: boolean;
}

export interface JobResult {
  commit: string;
  store_count: number;
  failure_count: number;
  converted: string[];
  removed: string[];
  unchanged: number;
  index_etag: string;
}

interface PreviousIndex {
  source_commit?: string | null;
  stores?: Array<{ path: string; zarr: string; updated_utc: string; modalities: string[]; groups: IndexStore['summary']['groups']; n_events: number; trial_types: string[] }>;
  failures?: IndexFailure[];
}

const SIDECAR = /_(channels\.tsv|events\.tsv|events\.json|electrodes\.tsv|coordsystem\.json|eeg\.json|emg\.json|ieeg\.json)$/;

function stemOf(name: string): string {
  return name.replace(/\.[^.]+$/, '');
}

/**
 * Recordings a set of changed paths touches: a data file or companion with the recording's stem in its folder,
 * or a sidecar at the recording's level or above (BIDS inheritance). A superset is fine: it only costs time.
 */
export function affectedRecordings(recordings: FoundRecording[], changed: string[]): Set<string> {
  const out = new Set<string>();
  for (const p of changed) {
    const dir = path.posix.dirname(p);
    const name = path.posix.basename(p);
    for (const r of recordings) {
      const rdir = path.posix.dirname(r.path);
      if (dir === rdir && stemOf(name) === stemOf(path.posix.basename(r.path))) out.add(r.path);
      else if (SIDECAR.test(name) && (dir === '.' || rdir === dir || rdir.startsWith(`${dir}/`))) out.add(r.path);
    }
  }
  return out;
}

async function readPreviousIndex(deps: Deps, datasetId: string): Promise<PreviousIndex | undefined> {
  const object = await deps.objects.get(`${datasetId}/zarr/index.json`);
  if (!object) return undefined;
  const chunks: Buffer[] = [];
  for await (const c of object.body) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as PreviousIndex;
  } catch {
    return undefined;
  }
}

/** Files of a recording's folder that share its stem: the data file and its companions (.vmrk, .eeg, .fdt). */
async function recordingFiles(checkout: SourceCheckout, recording: FoundRecording): Promise<string[]> {
  const dir = path.posix.dirname(recording.path);
  const stem = stemOf(path.posix.basename(recording.path));
  const names = await listFolder(path.join(checkout.dir, dir));
  return names.filter((n) => stemOf(n) === stem || n.startsWith(`${stem}.`)).map((n) => `${dir}/${n}`);
}

async function report(deps: Deps, payload: ZarrReadyPayload): Promise<void> {
  const { config, log } = deps;
  if (config.serviceWebhookToken) {
    // The callback goes over HTTP, as it does from an external runner (GitHub Actions).
    const res = await fetch(`${config.publicUrl}/webhooks/zarr-ready`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-token': config.serviceWebhookToken },
      body: JSON.stringify(payload),
    }).catch((err: unknown) => {
      log.warn({ err, dataset: payload.dataset_id }, 'zarr-ready callback could not be sent; recording directly');
      return undefined;
    });
    if (res?.ok) return;
    if (res) log.warn({ status: res.status, dataset: payload.dataset_id }, 'zarr-ready callback refused; recording directly');
  }
  await recordZarrReady(deps, payload);
}

export async function runConversionJob(deps: Deps, req: JobRequest, onProgress?: (done: number, total: number) => void): Promise<JobResult> {
  const { db, objects, config, log } = deps;
  const dataset: DatasetRow | undefined = await db.selectFrom('datasets').selectAll().where('id', '=', req.datasetId).executeTakeFirst();
  if (!dataset) throw new SourceError(`dataset ${req.datasetId} no longer exists`);
  const checkout = await checkoutSource(deps, dataset, req.ref);
  try {
    await report(deps, { dataset_id: dataset.id, status: 'converting', commit: checkout.commit });
    const recordings = await findRecordings(checkout.dir);
    const previous = req.full ? undefined : await readPreviousIndex(deps, dataset.id);
    const previousStores = new Map((previous?.stores ?? []).map((s) => [s.path, s]));
    const previousFailures = new Map((previous?.failures ?? []).map((f) => [f.path, f]));

    let toConvert: Set<string>;
    const prevCommit = previous?.source_commit;
    if (!previous || !prevCommit) {
      toConvert = new Set(recordings.map((r) => r.path));
    } else if (prevCommit === checkout.commit) {
      toConvert = new Set(recordings.filter((r) => !previousStores.has(r.path) && !previousFailures.has(r.path)).map((r) => r.path));
    } else {
      const changed = checkout.mirror ? await changedPaths(checkout.mirror, prevCommit, checkout.commit) : undefined;
      toConvert = changed ? affectedRecordings(recordings, changed) : new Set(recordings.map((r) => r.path));
      // A recording new to the tree, or never converted, is converted whatever the diff says.
      for (const r of recordings) if (!previousStores.has(r.path) && !previousFailures.has(r.path)) toConvert.add(r.path);
    }

    const stores: IndexStore[] = [];
    const failures: IndexFailure[] = [];
    const converted: string[] = [];
    const failedNow: string[] = [];
    const lister = folderLister(checkout.dir);
    let done = 0;
    for (const r of recordings) {
      if (!toConvert.has(r.path)) {
        const kept = previousStores.get(r.path);
        if (kept) stores.push({ path: kept.path, zarr: kept.zarr, updated_utc: kept.updated_utc, summary: { groups: kept.groups, modalities: kept.modalities, duration_s: 0, n_events: kept.n_events, trial_types: kept.trial_types, flags: [] } });
        else if (previousFailures.has(r.path)) failures.push(previousFailures.get(r.path)!);
        continue;
      }
      const files = await recordingFiles(checkout, r);
      const sink = new ObjectStoreSink(objects, `${dataset.id}/zarr/${r.zarr}/`);
      try {
        await checkout.materialize(files);
        const summary = await convertRecording({
          dataPath: path.join(checkout.dir, r.path),
          bidsRoot: checkout.dir,
          modality: r.modality,
          sourceCommit: checkout.commit,
          sink,
          lister,
        });
        await sink.commit();
        stores.push({ path: r.path, zarr: r.zarr, updated_utc: new Date().toISOString(), summary });
        converted.push(r.zarr);
      } catch (err) {
        // Whatever the sink wrote is no longer a copy of the source: remove it with the old store.
        await sink.discard();
        const failure = err instanceof SourceError ? { code: 'file_read_error' as const, reason: err.message } : failureOf(err);
        failures.push({ path: r.path, zarr: r.zarr, ...failure });
        failedNow.push(r.zarr);
        // Not `code`: the logger redacts that field everywhere (device codes).
        log.info({ dataset: dataset.id, path: r.path, failure: failure.code, reason: failure.reason }, 'recording not converted');
      } finally {
        await checkout.release(files);
      }
      onProgress?.(++done, toConvert.size);
    }

    // Latest-only: stores whose source is gone are deleted, after the new ones were written.
    const present = new Set(recordings.map((r) => r.path));
    const removed = [...previousStores.values()].filter((s) => !present.has(s.path)).map((s) => s.zarr);
    for (const zarr of removed) await objects.deletePrefix(`${dataset.id}/zarr/${zarr}/`);

    const index = buildStoreIndex({
      datasetId: dataset.id,
      contractBase: `${config.zarrCacheBaseUrl}/${dataset.id}/zarr`,
      dataBase: config.zarrPublicBaseUrl ? `${config.zarrPublicBaseUrl}/${dataset.id}/zarr` : null,
      sourceCommit: checkout.commit,
      stores,
      failures,
    });
    const written = await objects.put(`${dataset.id}/zarr/index.json`, `${JSON.stringify(index, null, 2)}\n`, { contentType: 'application/json' });
    const result: JobResult = {
      commit: checkout.commit,
      store_count: stores.length,
      failure_count: failures.length,
      converted,
      removed: [...removed, ...failedNow],
      unchanged: stores.length - converted.length,
      index_etag: written.etag,
    };
    await report(deps, {
      dataset_id: dataset.id,
      status: 'ready',
      commit: checkout.commit,
      store_count: result.store_count,
      index_etag: result.index_etag,
      converted: result.converted,
      removed: result.removed,
      failure_count: result.failure_count,
    });
    return result;
  } finally {
    await checkout.cleanup();
  }
}

/** Reports a job that could not run at all (no source, git failure): `zarr_status` becomes `failed`. */
export async function reportJobFailure(deps: Deps, datasetId: string, commit: string | undefined, error: string): Promise<void> {
  await report(deps, { dataset_id: datasetId, status: 'failed', commit: commit ?? '0'.repeat(40), error });
}
