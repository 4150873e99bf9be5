/**
 * Local conversion into a folder (what `nds convert` does): one data file to `<out>/<stem>.zarr`, or every
 * recording of a BIDS tree to `<out>/<bids path without extension>.zarr` plus `<out>/index.json`. Each
 * store is written beside its final place and renamed into it, so a failed conversion never leaves a
 * half-written store where a good one was.
 */
import { mkdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { FolderSink } from './zarr/folder-sink.js';
import { DirectObjectWriter } from '../objects/direct-object-writer.js';
import type { ChunkCodec } from './zarr/chunk-codec.js';
import { systemClock } from '../core/clock.js';
import { buildStoreIndex, serializeStoreIndex, type IndexFailure, type IndexStore, type StoreIndex } from './zarr/store-index.js';
import { convertRecording, failureOf } from './convert-recording.js';
import { findRecordings, zarrPathFor } from './bids/find-recordings.js';
import { folderLister } from './bids/sidecar-files.js';

export interface ConvertEvents {
  /** A recording is about to be converted (index of `total`). */
  onStart?: (path: string, index: number, total: number) => void;
  onProgress?: (path: string, fraction: number) => void;
  onDone?: (path: string, result: { ok: true; store: IndexStore } | { ok: false; failure: IndexFailure }) => void;
}

export interface FolderConversion {
  stores: IndexStore[];
  failures: IndexFailure[];
  /** The index written to `<out>/index.json` (BIDS trees only). */
  index?: StoreIndex;
}

export async function convertFileToFolder(file: string, out: string, events: ConvertEvents = {}, codec?: ChunkCodec): Promise<FolderConversion> {
  const name = basename(file);
  const zarr = zarrPathFor(name);
  // The file the user named, followed if it is a link; its companions must then lie beside the file itself.
  const dataPath = await realpath(file).catch(() => resolve(file));
  return collect([{ path: name, zarr, dataPath }], out, events, async (item, sink, onProgress) =>
    convertRecording({ dataPath: item.dataPath, sink, onProgress, ...(codec ? { codec } : {}) }),
  );
}

export async function convertBidsTreeToFolder(root: string, out: string, events: ConvertEvents = {}, codec?: ChunkCodec): Promise<FolderConversion> {
  const absoluteRoot = resolve(root);
  const lister = folderLister(absoluteRoot);
  const found = await findRecordings(absoluteRoot);
  const items = found.map((f) => ({ ...f, dataPath: join(absoluteRoot, f.path) }));
  const result = await collect(items, out, events, async (item, sink, onProgress) =>
    convertRecording({ dataPath: item.dataPath, bidsRoot: absoluteRoot, modality: item.modality ?? 'eeg', sink, lister, onProgress, ...(codec ? { codec } : {}) }),
  );
  const index = buildStoreIndex({ datasetId: basename(absoluteRoot), contractBase: null, dataBase: null, sourceCommit: null, ...result });
  await mkdir(out, { recursive: true });
  await writeFile(join(out, 'index.json'), serializeStoreIndex(index));
  return { ...result, index };
}

type Item = { path: string; zarr: string; dataPath: string; modality?: string };

type Convert = (item: Item, sink: FolderSink, onProgress: (fraction: number) => void) => ReturnType<typeof convertRecording>;

async function collect(items: Item[], out: string, events: ConvertEvents, convert: Convert): Promise<FolderConversion> {
  const stores: IndexStore[] = [];
  const failures: IndexFailure[] = [];
  // One writer for the run: the chunks of every recording go past the page cache on its threads (decision 0045).
  const writer = new DirectObjectWriter();
  try {
    for (const [i, item] of items.entries()) {
      events.onStart?.(item.path, i, items.length);
      const result = await convertOne(item, out, convert, writer, events);
      if (result.ok) stores.push(result.store);
      else failures.push(result.failure);
      events.onDone?.(item.path, result);
    }
  } finally {
    await writer.close();
  }
  return { stores, failures };
}

/** One recording into a staging folder beside its place, renamed into it once whole; removed on a failure. */
async function convertOne(
  item: Item,
  out: string,
  convert: Convert,
  writer: DirectObjectWriter,
  events: ConvertEvents,
): Promise<{ ok: true; store: IndexStore } | { ok: false; failure: IndexFailure }> {
  const target = join(out, item.zarr);
  const staging = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  try {
    const summary = await convert(item, new FolderSink(staging, writer), (fraction) => events.onProgress?.(item.path, fraction));
    await rm(target, { recursive: true, force: true });
    await rename(staging, target);
    return { ok: true, store: { path: item.path, zarr: item.zarr, updated_utc: systemClock.now().toISOString(), summary } };
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    return { ok: false, failure: { path: item.path, zarr: item.zarr, ...failureOf(err) } };
  }
}
