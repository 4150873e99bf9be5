/** Test and bench helpers for the viewer: publish converted recordings as a dataset, and drive chromium. */
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { convertRecording } from '../../src/formats/convert-recording.js';
import { ObjectStoreSink } from '../../src/conversion/object-store-sink.js';
import { buildStoreIndex, type IndexStore } from '../../src/formats/zarr/store-index.js';
import { writeStoreIndex } from '../../src/formats/zarr/store-index-object.js';
import { syncCatalogue } from '../../src/recordings/catalogue-sync.js';
import type { RunningServer } from '../../src/server.js';
import { insertDatasetRows } from '../support/datasets.js';

export interface PublishedRecording {
  /** Source file to convert. */
  file: string;
  /** Store path inside the dataset's Zarr copy, e.g. `sub-01/eeg/sub-01_task-rest_eeg.zarr`. */
  zarr: string;
  /** The BIDS root the file sits in, so its sidecars (channels.tsv, events.tsv) apply. */
  bidsRoot?: string;
  /** The data file's BIDS path, as the catalogue and the signal routes name it; default: `zarr` without `.zarr`. */
  path?: string;
}

/**
 * Inserts a dataset row, converts each file into `<id>/zarr/<zarr>/`, writes `<id>/zarr/index.json` and the
 * recordings' catalogue rows, as a finished conversion does.
 */
export async function publishDataset(
  server: RunningServer,
  options: { id: string; ownerId: number; name: string; visibility?: 'public' | 'private'; recordings: PublishedRecording[] },
): Promise<IndexStore[]> {
  const { db, objects } = server.deps;
  await insertDatasetRows(db, { id: options.id, name: options.name, owner_id: options.ownerId, visibility: options.visibility ?? 'public', zarr_status: 'ready', zarr_store_count: options.recordings.length });
  const stores: IndexStore[] = [];
  for (const r of options.recordings) {
    const sink = new ObjectStoreSink(objects, `${options.id}/zarr/${r.zarr}/`);
    const summary = await convertRecording({ dataPath: r.file, sink, ...(r.bidsRoot ? { bidsRoot: r.bidsRoot } : {}) });
    await sink.commit();
    stores.push({ path: r.path ?? r.zarr.replace(/\.zarr$/, ''), zarr: r.zarr, updated_utc: new Date().toISOString(), summary });
  }
  const index = buildStoreIndex({ datasetId: options.id, contractBase: null, dataBase: null, sourceCommit: null, stores, failures: [] });
  await writeStoreIndex(objects, options.id, index);
  await syncCatalogue(server.deps, options.id, index);
  return stores;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

/** A chunk key of a store, parsed: level 0 `<group>/0/c/<cc>/<tc>`, views `<group>/view/<L>/c/0/<cc>/<tc>`. */
export function parseChunkPath(path: string): { group: string; level: number; channelChunk: number; timeChunk: number } | undefined {
  let m = /^([^/]+)\/0\/c\/(\d+)\/(\d+)$/.exec(path);
  if (m) return { group: m[1]!, level: 0, channelChunk: Number(m[2]), timeChunk: Number(m[3]) };
  m = /^([^/]+)\/view\/(\d+)\/c\/0\/(\d+)\/(\d+)$/.exec(path);
  if (m) return { group: m[1]!, level: Number(m[2]), channelChunk: Number(m[3]), timeChunk: Number(m[4]) };
  return undefined;
}
