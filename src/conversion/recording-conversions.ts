/**
 * The conversions of a planned job: each recording to convert is materialized from the checkout, written
 * into its store in place (`ObjectStoreSink`: chunks first, metadata last) and released again, so the disk
 * holds one recording's data at a time. A recording that fails becomes a failure of the index, and its
 * half-written store is removed with the old one.
 */
import path from 'node:path';
import type { Deps } from '../deps.js';
import { folderLister } from '../formats/bids/sidecar-files.js';
import type { FoundRecording } from '../formats/bids/find-recordings.js';
import { convertRecording, failureOf } from '../formats/convert-recording.js';
import { SourceTree } from '../formats/source-tree.js';
import type { IndexFailure, IndexStore, StoreIndexEntry } from '../formats/zarr/store-index.js';
import { observeRecording } from './conversion-metrics.js';
import type { ConversionPlan } from './conversion-plan.js';
import { ObjectStoreSink } from './object-store-sink.js';
import { listFolder, SourceError, type SourceCheckout } from './source-checkout.js';

export interface ConversionOutcome {
  /** Every store of the new index, in source order: converted now or kept. */
  stores: Array<IndexStore | StoreIndexEntry>;
  failures: IndexFailure[];
  /** Store folders written now. */
  converted: string[];
  /** Store folders whose conversion failed now (their old store is gone too). */
  failed: string[];
}

function stemOf(name: string): string {
  return name.replace(/\.[^.]+$/, '');
}

/** Files of a recording's folder that share its stem: the data file and its companions (.vmrk, .eeg, .fdt). */
async function recordingFiles(checkout: SourceCheckout, recording: FoundRecording): Promise<string[]> {
  const dir = path.posix.dirname(recording.path);
  const stem = stemOf(path.posix.basename(recording.path));
  const names = await listFolder(path.join(checkout.dir, dir));
  return names.filter((n) => stemOf(n) === stem || n.startsWith(`${stem}.`)).map((n) => `${dir}/${n}`);
}

export async function convertPlannedRecordings(
  deps: Pick<Deps, 'objects' | 'clock' | 'log' | 'metrics'>,
  datasetId: string,
  checkout: SourceCheckout,
  plan: ConversionPlan,
  onProgress?: (done: number, total: number) => void,
): Promise<ConversionOutcome> {
  const outcome: ConversionOutcome = { stores: [], failures: [], converted: [], failed: [] };
  const lister = folderLister(checkout.dir);
  // Every file a recording reads must be a regular file of the checkout; the entries it refused say why not.
  const tree = await SourceTree.at(checkout.dir, checkout.refused);
  const now = () => deps.clock.now();
  let done = 0;
  for (const step of plan.steps) {
    if (step.action === 'keep_store') outcome.stores.push(step.store);
    else if (step.action === 'keep_failure') outcome.failures.push(step.failure);
    if (step.action !== 'convert') continue;
    const r = step.recording;
    const files = await recordingFiles(checkout, r);
    const sink = new ObjectStoreSink(deps.objects, `${datasetId}/zarr/${r.zarr}/`);
    const started = performance.now();
    try {
      await checkout.materialize(files);
      const summary = await convertRecording({
        dataPath: path.join(checkout.dir, r.path),
        bidsRoot: checkout.dir,
        modality: r.modality,
        sourceCommit: checkout.commit,
        sink,
        lister,
        now,
        tree,
      });
      await sink.commit();
      outcome.stores.push({ path: r.path, zarr: r.zarr, updated_utc: now().toISOString(), summary });
      outcome.converted.push(r.zarr);
      await observeRecording(deps.metrics, checkout.dir, files, started, 'converted');
    } catch (err) {
      // Whatever the sink wrote is no longer a copy of the source: remove it with the old store.
      await sink.discard();
      const failure = err instanceof SourceError ? { code: 'file_read_error' as const, reason: err.message } : failureOf(err);
      outcome.failures.push({ path: r.path, zarr: r.zarr, ...failure });
      outcome.failed.push(r.zarr);
      void observeRecording(deps.metrics, checkout.dir, files, started, 'failed');
      // Not `code`: the logger redacts that field everywhere (device codes).
      deps.log.info({ dataset: datasetId, path: r.path, failure: failure.code, reason: failure.reason }, 'recording not converted');
    } finally {
      await checkout.release(files);
    }
    onProgress?.(++done, plan.convertCount);
  }
  return outcome;
}
