/**
 * The conversion of one recording of a job (a task, decision 0024): its files are given their content from
 * the source as the conversion opens them (the data file, its companions, the sidecars it inherits; decision
 * 0030), written into its store in place (`ObjectStoreSink`: chunks first, metadata last) and released again,
 * so the disk holds one recording's data at a time. A file given its content from a content object is not
 * hashed: its digest is the object's key (decision 0034). A recording that fails becomes a failure of the
 * index, and its half-written store is removed with the old one.
 */
import path from 'node:path';
import type { Deps } from '../deps.js';
import { folderLister } from '../formats/bids/sidecar-files.js';
import type { FoundRecording } from '../formats/bids/find-recordings.js';
import { convertRecording, failureOf } from '../formats/convert-recording.js';
import { SourceTree } from '../formats/source-tree.js';
import { observeRecording } from './conversion-metrics.js';
import type { TaskOutcome } from './job-plan.js';
import { ObjectStoreSink, StoreWriteError, WriteFenced, type WriteFence } from './object-store-sink.js';
import { listFolder, SourceError, type SourceCheckout } from './source-checkout.js';

function stemOf(name: string): string {
  return name.replace(/\.[^.]+$/, '');
}

/** Files of a recording's folder that share its stem: the data file and its companions (.vmrk, .eeg, .fdt). */
async function recordingFiles(checkout: SourceCheckout, recording: Pick<FoundRecording, 'path'>): Promise<string[]> {
  const dir = path.posix.dirname(recording.path);
  const stem = stemOf(path.posix.basename(recording.path));
  const names = await listFolder(path.join(checkout.dir, dir));
  return names.filter((n) => stemOf(n) === stem || n.startsWith(`${stem}.`)).map((n) => `${dir}/${n}`);
}

/** A checked-out source, ready for conversions: the tree a recording may read, and its sidecar lister. */
export interface OpenSource {
  checkout: SourceCheckout;
  tree: SourceTree;
  lister: ReturnType<typeof folderLister>;
}

/**
 * Gives a file of the checkout its content. A content object missing or not what its key names is the file's
 * failure (`SourceError`); anything else (the store failed a read, the disk a write) is a fault of the moment,
 * not of the file, so its task is tried again and, past its attempts, failed as the service's.
 */
async function materializeOrFault(checkout: SourceCheckout, rel: string): Promise<void> {
  try {
    await checkout.materialize([rel]);
  } catch (err) {
    throw err instanceof SourceError ? err : new StoreWriteError(`${rel} into the checkout`, err);
  }
}

export async function openSource(checkout: SourceCheckout): Promise<OpenSource> {
  // Every file a recording reads must be a regular file of the checkout; the entries it refused say why not.
  // A file is given its content as it is opened: whatever the readers and sidecar lookups open, nothing else.
  // One given it from a content object has the digest its key names: the conversion does not hash it again.
  const tree = await SourceTree.at(checkout.dir, checkout.refused, (rel) => materializeOrFault(checkout, rel), (rel) => checkout.contentSha256(rel));
  return { checkout, tree, lister: folderLister(checkout.dir) };
}

/** Converts one recording into its store (in place); a recording that fails is a failure of the index. */
export async function convertOneRecording(
  deps: Pick<Deps, 'objects' | 'clock' | 'log' | 'metrics'>,
  datasetId: string,
  source: OpenSource,
  r: Pick<FoundRecording, 'path' | 'zarr' | 'modality'>,
  /** The task's hold, for a worker (`ObjectStoreSink`): a task taken back meanwhile throws `WriteFenced`. */
  fence?: WriteFence,
): Promise<TaskOutcome> {
  const { checkout } = source;
  const now = () => deps.clock.now();
  const files = await recordingFiles(checkout, r);
  const sink = new ObjectStoreSink(deps.objects, `${datasetId}/zarr/${r.zarr}/`, fence);
  const started = performance.now();
  try {
    const summary = await convertRecording({
      dataPath: path.join(checkout.dir, r.path),
      bidsRoot: checkout.dir,
      modality: r.modality,
      sourceCommit: checkout.commit,
      sink,
      lister: source.lister,
      now,
      tree: source.tree,
    });
    await sink.commit();
    await observeRecording(deps.metrics, checkout.dir, files, started, 'converted');
    return { store: { path: r.path, zarr: r.zarr, updated_utc: now().toISOString(), summary } };
  } catch (err) {
    // Whatever the sink wrote is no longer a copy of the source: remove it with the old store.
    if (err instanceof StoreWriteError) {
      // Not the file's failure but the store's: the caller tries again (the store may refuse this too).
      await sink.discard().catch(() => undefined);
      throw err;
    }
    await sink.discard();
    // Not the file's failure: the task is another worker's now, and its outcome theirs to record.
    if (err instanceof WriteFenced) throw err;
    const failure = err instanceof SourceError ? { code: 'file_read_error' as const, reason: err.message } : failureOf(err);
    void observeRecording(deps.metrics, checkout.dir, files, started, 'failed');
    // Not `code`: the logger redacts that field everywhere (device codes).
    deps.log.info({ dataset: datasetId, path: r.path, failure: failure.code, reason: failure.reason }, 'recording not converted');
    return { failure: { path: r.path, zarr: r.zarr, ...failure, kind: 'file' } };
  } finally {
    await checkout.release();
  }
}
