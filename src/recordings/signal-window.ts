/**
 * Exact signal windows: the samples of some channels of one recording over a span of time, in physical
 * units (`digital × scale + offset` in float64, as the source reader defines them; float32 rounding only at
 * the output), read from the level-0 chunks the window touches and nothing else, optionally resampled
 * (`resample.ts`). The answer is produced one 64-channel row block at a time, so memory stays near one row
 * block of the window however many channels are asked for.
 */
import { createHash } from 'node:crypto';
import type { Deps } from '../deps.js';
import type { User } from '../db/accounts-tables.js';
import { NdsError } from '../core/errors.js';
import { visibleDataset } from '../datasets/dataset-access.js';
import { readObject } from '../objects/read-object.js';
import { findReadableStore } from './catalogue-queries.js';
import { viewerOf } from './catalogue.js';
import { decodeChunk } from './chunk-decoder.js';
import { inputSpan, MAX_RATIO_TERM, resampleRatio, resampleSpan, type Ratio } from './resample.js';
import { readStoreMetadata, type StoreGroup, type StoreMetadata } from './store-metadata.js';

/** Most values (channels × samples) one window may hold: 16 Mi, 64 MiB of float32. */
export const MAX_WINDOW_VALUES = 16 * 1024 * 1024;
/** Most values of a `format=json` answer. */
export const MAX_JSON_VALUES = 100_000;

export interface WindowRequest {
  path: string;
  start?: number;
  duration?: number;
  start_sample?: number;
  n_samples?: number;
  channels?: string[];
  channel_type?: string;
  group?: string;
  rate?: number;
  format: 'npy' | 'f32' | 'json';
  dtype: 'float32' | 'float64';
}

export interface WindowPlan {
  datasetId: string;
  store: StoreMetadata;
  group: StoreGroup;
  /** Indices of the chosen channels in the group, in the order asked for. */
  rows: number[];
  /** The window in the group's own samples. */
  start: number;
  count: number;
  /** The answer's rate, first sample and length (the group's own unless resampled). */
  rate: number;
  outStart: number;
  outCount: number;
  ratio: Ratio | undefined;
  etag: string;
}

function refuse(message: string, detail: string): NdsError {
  return new NdsError('validation_failed', { message, details: [detail] });
}

/** Finds the recording and decides the window, refusing what cannot be answered with a reason. */
export async function planWindow(deps: Pick<Deps, 'db' | 'objects'>, user: User | undefined, datasetId: string, req: WindowRequest): Promise<WindowPlan> {
  const zarr = await findReadableStore(deps.db, viewerOf(user), datasetId, req.path);
  const store = zarr === undefined ? undefined : await readStoreMetadata(deps.objects, datasetId, zarr);
  if (!store) {
    // Whether the dataset is missing, private to someone else, or lacks the recording, the answer is 404.
    await visibleDataset(deps.db, datasetId, user);
    throw new NdsError('not_found', { message: `No converted recording at ${req.path} in ${datasetId}.` });
  }

  let group: StoreGroup | undefined;
  if (req.group) {
    group = store.groups.find((g) => g.name === req.group);
    if (!group) throw refuse(`No group ${req.group} in this recording.`, `group: one of ${store.groups.map((g) => g.name).join(', ')}`);
  } else if (req.channels) {
    group = store.groups.find((g) => req.channels!.every((label) => g.channels.some((c) => c.label === label))) ?? store.groups[0];
  } else if (req.channel_type) {
    group = store.groups.find((g) => g.channels.some((c) => c.type.toUpperCase() === req.channel_type)) ?? store.groups[0];
  } else {
    group = store.groups[0];
  }
  if (!group) throw new NdsError('not_found', { message: `The recording at ${req.path} has no signal group.` });

  let rows: number[];
  if (req.channels) {
    const missing = req.channels.filter((label) => !group!.channels.some((c) => c.label === label));
    if (missing.length > 0) throw refuse(`No channel ${missing.join(', ')} in group ${group.name}.`, `channels: labels of ${group.name}, e.g. ${group.channels.slice(0, 5).map((c) => c.label).join(', ')}`);
    rows = req.channels.map((label) => group!.channels.findIndex((c) => c.label === label));
  } else if (req.channel_type) {
    rows = group.channels.flatMap((c, i) => (c.type.toUpperCase() === req.channel_type ? [i] : []));
    if (rows.length === 0) throw refuse(`No channel of type ${req.channel_type} in group ${group.name}.`, `channel_type: one of ${[...new Set(group.channels.map((c) => c.type))].join(', ')}`);
  } else {
    rows = group.channels.map((_, i) => i);
  }

  const bySamples = req.start_sample !== undefined || req.n_samples !== undefined;
  const bySeconds = req.start !== undefined || req.duration !== undefined;
  if (bySamples && bySeconds) throw refuse('Give the window in seconds or in samples, not both.', 'start and duration, or start_sample and n_samples');
  const start = bySamples ? (req.start_sample ?? 0) : Math.round((req.start ?? 0) * group.rate);
  const count = bySamples ? (req.n_samples ?? group.n_samples - start) : req.duration !== undefined ? Math.round(req.duration * group.rate) : group.n_samples - start;
  if (count <= 0) throw refuse('The window is empty.', 'duration or n_samples: more than zero');
  if (start + count > group.n_samples) {
    throw refuse(
      `The window runs past the end of the recording: it ends at sample ${start + count}, the recording has ${group.n_samples} (${group.duration_s} s at ${group.rate} Hz).`,
      `start + duration: at most ${group.duration_s} s`,
    );
  }

  let ratio: Ratio | undefined;
  let rate = group.rate;
  let outStart = start;
  let outCount = count;
  if (req.rate !== undefined && req.rate !== group.rate) {
    ratio = resampleRatio(group.rate, req.rate);
    if (Math.max(ratio.up, ratio.down) > MAX_RATIO_TERM) {
      throw refuse(`Cannot resample ${group.rate} Hz to ${req.rate} Hz: the ratio ${ratio.up}/${ratio.down} is too fine.`, `rate: a rate whose ratio to ${group.rate} Hz reduces to terms of at most ${MAX_RATIO_TERM}`);
    }
    rate = req.rate;
    outStart = Math.round((start * ratio.up) / ratio.down);
    outCount = Math.round((count * ratio.up) / ratio.down);
    if (outCount <= 0) throw refuse('The window is empty at that rate.', 'duration: longer');
  }
  const values = rows.length * Math.max(count, outCount);
  if (values > MAX_WINDOW_VALUES) {
    throw refuse(`The window holds ${values} values; one request may hold at most ${MAX_WINDOW_VALUES} (channels × samples).`, 'split the window in time or ask for fewer channels');
  }
  if (req.format === 'json' && rows.length * outCount > MAX_JSON_VALUES) {
    throw refuse(`format=json answers at most ${MAX_JSON_VALUES} values; this window holds ${rows.length * outCount}.`, 'format: npy or f32 for larger windows');
  }
  const etag = `"${createHash('sha256')
    .update(JSON.stringify([store.etag, group.name, rows, start, count, rate, req.format, req.dtype]))
    .digest('base64url')
    .slice(0, 27)}"`;
  return { datasetId, store, group, rows, start, count, rate, outStart, outCount, ratio, etag };
}

type Digital = Int16Array | Int32Array | Float32Array | Float64Array;

function typed(dtype: string, bytes: Uint8Array): Digital {
  const size = dtype === 'int16' ? 2 : dtype === 'float64' ? 8 : 4;
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice();
  const n = Math.floor(aligned.byteLength / size);
  switch (dtype) {
    case 'int16':
      return new Int16Array(aligned.buffer, aligned.byteOffset, n);
    case 'float32':
      return new Float32Array(aligned.buffer, aligned.byteOffset, n);
    case 'float64':
      return new Float64Array(aligned.buffer, aligned.byteOffset, n);
    default:
      return new Int32Array(aligned.buffer, aligned.byteOffset, n);
  }
}

/** Runs `work` over `items` with at most `limit` at once, results in order. */
async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  });
  await Promise.all(runners);
  return results;
}

/**
 * Physical samples `[first, end)` (clipped to the recording) of the group's channels `rows` (all in one
 * 64-channel row block `block`), each as a float64 array, read from the chunks that span them.
 */
async function readBlockRows(deps: Pick<Deps, 'objects'>, plan: WindowPlan, block: number, rows: number[], first: number, end: number): Promise<Float64Array[]> {
  const { group, store } = plan;
  const cs = group.chunk_samples;
  const out = rows.map(() => new Float64Array(end - first));
  const chunks: number[] = [];
  for (let c = Math.floor(first / cs); c * cs < end; c++) chunks.push(c);
  const bytesPerSample = group.dtype === 'int16' ? 2 : group.dtype === 'float64' ? 8 : 4;
  await mapLimited(chunks, 8, async (c) => {
    const key = `${store.prefix}${group.name}/0/c/${block}/${c}`;
    const frame = await readObject(deps.objects, key);
    if (!frame) throw new NdsError('internal_error', { message: `A chunk of ${plan.datasetId}/${group.name} is missing.` });
    const rowsInBlock = Math.min(group.chunk_channels, group.n_channels - block * group.chunk_channels);
    const digital = typed(group.dtype, await decodeChunk(frame, rowsInBlock * cs * bytesPerSample));
    const chunkRows = Math.round(digital.length / cs);
    const from = Math.max(first, c * cs);
    const to = Math.min(end, (c + 1) * cs);
    rows.forEach((row, k) => {
      const r = row - block * group.chunk_channels;
      if (r >= chunkRows) throw new NdsError('internal_error', { message: `A chunk of ${plan.datasetId}/${group.name} is shorter than its metadata says.` });
      const { scale, offset } = group.channels[row]!;
      const base = r * cs - c * cs;
      const target = out[k]!;
      for (let i = from; i < to; i++) target[i - first] = digital[base + i]! * scale + offset;
    });
  });
  return out;
}

/** The window's channels as float64 rows at the answer's rate, one row block at a time, in the order asked for. */
export async function* windowRows(deps: Pick<Deps, 'objects'>, plan: WindowPlan): AsyncGenerator<{ index: number; values: Float64Array }> {
  const { group } = plan;
  // Consecutive runs of requested rows in one row block are read together; order is kept.
  let i = 0;
  while (i < plan.rows.length) {
    const block = Math.floor(plan.rows[i]! / group.chunk_channels);
    let j = i;
    while (j < plan.rows.length && Math.floor(plan.rows[j]! / group.chunk_channels) === block) j++;
    const rows = plan.rows.slice(i, j);
    if (!plan.ratio) {
      const values = await readBlockRows(deps, plan, block, rows, plan.start, plan.start + plan.count);
      for (let k = 0; k < rows.length; k++) yield { index: i + k, values: values[k]! };
    } else {
      const span = inputSpan(plan.ratio, plan.outStart, plan.outCount);
      const first = Math.max(0, span.first);
      const end = Math.min(group.n_samples, span.end);
      const values = await readBlockRows(deps, plan, block, rows, first, end);
      for (let k = 0; k < rows.length; k++) yield { index: i + k, values: resampleSpan(plan.ratio, values[k]!, first, plan.outStart, plan.outCount) };
    }
    i = j;
  }
}

/** The NumPy `.npy` (format 1.0) header of a C-ordered [channels, samples] array. */
export function npyHeader(dtype: 'float32' | 'float64', shape: [number, number]): Uint8Array {
  const dict = `{'descr': '<${dtype === 'float32' ? 'f4' : 'f8'}', 'fortran_order': False, 'shape': (${shape[0]}, ${shape[1]}), }`;
  const unpadded = 10 + dict.length + 1;
  const total = Math.ceil(unpadded / 64) * 64;
  const header = dict + ' '.repeat(total - unpadded) + '\n';
  const bytes = new Uint8Array(10 + header.length);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0], 0);
  bytes[8] = header.length & 0xff;
  bytes[9] = header.length >> 8;
  bytes.set(new TextEncoder().encode(header), 10);
  return bytes;
}

/** The answer's bytes, streamed row by row: `.npy` (header then rows), raw float32, or nothing for JSON. */
export function windowStream(deps: Pick<Deps, 'objects'>, plan: WindowPlan, format: 'npy' | 'f32', dtype: 'float32' | 'float64'): ReadableStream<Uint8Array> {
  const rows = windowRows(deps, plan);
  const wide = format === 'npy' && dtype === 'float64';
  let headerSent = format !== 'npy';
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(npyHeader(wide ? 'float64' : 'float32', [plan.rows.length, plan.outCount]));
        return;
      }
      try {
        const next = await rows.next();
        if (next.done) return controller.close();
        const values = next.value.values;
        const out = wide ? new Float64Array(values) : Float32Array.from(values);
        controller.enqueue(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await rows.return(undefined);
    },
  });
}

/** A small window as JSON numbers (float32 or float64 values, as asked). */
export async function windowJson(deps: Pick<Deps, 'objects'>, plan: WindowPlan, dtype: 'float32' | 'float64'): Promise<number[][]> {
  const data: number[][] = [];
  for await (const { values } of windowRows(deps, plan)) data.push(Array.from(dtype === 'float32' ? Float32Array.from(values) : values));
  return data;
}

/** The headers every window answer carries. */
export function windowHeaders(plan: WindowPlan): Record<string, string> {
  return {
    'X-NDS-Channels': plan.rows.map((r) => encodeURIComponent(plan.group.channels[r]!.label)).join(','),
    'X-NDS-Rate': String(plan.rate),
    'X-NDS-Start-Sample': String(plan.outStart),
    'X-NDS-Shape': `${plan.rows.length},${plan.outCount}`,
    'X-NDS-Group': plan.group.name,
    ETag: plan.etag,
    'Access-Control-Expose-Headers': 'X-NDS-Channels, X-NDS-Rate, X-NDS-Start-Sample, X-NDS-Shape, X-NDS-Group, ETag',
  };
}
