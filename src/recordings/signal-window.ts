/**
 * Exact signal windows: the samples of some channels of one recording over a span of time, in physical
 * units (`digital × scale + offset` in float64, as the source reader defines them; float32 rounding only at
 * the output), read from the level-0 chunks the window touches and nothing else, optionally resampled
 * (`resample.ts`). The answer is produced a few rows at a time (pieces of at most 256 KiB of float32), so
 * memory stays near one row block's decoded chunks however long the window and however many channels.
 */
import { createHash } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { WindowRequest } from '../client/index.js';
import type { User } from '../db/accounts-tables.js';
import { NdsError } from '../core/errors.js';
import { visibleDataset } from '../datasets/dataset-access.js';
import { findReadableStore } from './catalogue-queries.js';
import { decodeChunk } from './chunk-decoder.js';
import type { DigitalArray } from './decoded-chunks.js';
import type { RecordingReadDeps } from './recording-caches.js';
import { filterLength, inputSpan, MAX_RATIO_TERM, resampleRatio, resampleSpan, type Ratio } from './resample.js';
import type { StoreGroup, StoreMetadata } from './store-metadata.js';

/** Most values (channels × samples) one window may hold: 16 Mi, 64 MiB of float32. */
export const MAX_WINDOW_VALUES = 16 * 1024 * 1024;
/** Most values of a `format=json` answer. */
export const MAX_JSON_VALUES = 100_000;
/**
 * Most multiply-adds of the resampling filter one window may take (channels × output samples × filter taps ÷
 * `up`): about a second of one core (1.4 s measured on a shared 2-core machine). The value bound alone allows
 * about 40 × 16 Mi (the filter costs some 40 multiply-adds an input or output sample, whichever is more): several
 * seconds of CPU for one anonymous request;
 * ordinary requests stay far below this one (64 channels, a minute from 256 Hz to 128 Hz: 4 × 10^7).
 */
export const MAX_RESAMPLE_WORK = 200_000_000;
/** Multiply-adds of the resampler between two turns of the event loop (a few milliseconds). */
const RESAMPLE_SLICE_WORK = 2_000_000;

/** How a window's answer is written: `.npy`, raw float32 or JSON, and the sample type of npy and json. */
export interface WindowEncoding {
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

/** What reading a planned window's chunks takes. */
type ChunkReadDeps = Pick<RecordingReadDeps, 'objects' | 'recordingCaches'>;

/** Who reads a window: an account (or nobody), or the holder of a checked read grant of the dataset. */
export type WindowReader = User | undefined | { grant: string };

function isGrant(reader: WindowReader): reader is { grant: string } {
  return reader !== undefined && 'grant' in reader;
}

/** The store of the recording at `path` when `reader` may read `datasetId`, remembered for a short while. */
function readableStore(deps: RecordingReadDeps, reader: WindowReader, datasetId: string, path: string): Promise<StoreMetadata | undefined> {
  const { storeLookups, storeMetadata } = deps.recordingCaches;
  const readerKey = isGrant(reader) ? `grant:${reader.grant}` : String(reader?.id ?? '');
  return storeLookups.find(readerKey, datasetId, path, async () => {
    // A read grant reads its one dataset whatever its visibility, as its owner would.
    const zarr = await findReadableStore(deps.db, isGrant(reader) ? 'granted' : reader, datasetId, path);
    return zarr === undefined ? undefined : storeMetadata.read(datasetId, zarr);
  });
}

function refuse(message: string, detail: string): NdsError {
  return new NdsError('validation_failed', { message, details: [detail] });
}

/**
 * Finds the recording and decides the window, refusing what cannot be answered with a reason. `reader` is the
 * caller, or `{ grant }` once the route has checked a read grant of the dataset (`datasets/read-grant.ts`).
 */
export async function planWindow(deps: RecordingReadDeps, reader: WindowReader, req: WindowRequest, encoding: WindowEncoding): Promise<WindowPlan> {
  const datasetId = req.dataset_id;
  const store = await readableStore(deps, reader, datasetId, req.path);
  if (!store) {
    // Whether the dataset is missing, private to someone else, or lacks the recording, the answer is 404.
    if (!isGrant(reader)) await visibleDataset(deps.db, datasetId, reader);
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
  if (ratio) {
    const work = Math.ceil((rows.length * outCount * filterLength(ratio)) / ratio.up);
    if (work > MAX_RESAMPLE_WORK) {
      throw refuse(
        `Resampling this window to ${rate} Hz takes ${work} multiply-adds (channels × samples × filter taps ÷ ${ratio.up}); one request may take at most ${MAX_RESAMPLE_WORK}.`,
        'split the window in time or ask for fewer channels (a rate whose ratio to the recording\'s reduces to smaller terms has a shorter filter)',
      );
    }
  }
  if (encoding.format === 'json' && rows.length * outCount > MAX_JSON_VALUES) {
    throw refuse(`format=json answers at most ${MAX_JSON_VALUES} values; this window holds ${rows.length * outCount}.`, 'format: npy or f32 for larger windows');
  }
  const etag = `"${createHash('sha256')
    .update(JSON.stringify([store.etag, group.name, rows, start, count, rate, encoding.format, encoding.dtype]))
    .digest('base64url')
    .slice(0, 27)}"`;
  return { datasetId, store, group, rows, start, count, rate, outStart, outCount, ratio, etag };
}

function typed(dtype: string, bytes: Uint8Array): DigitalArray {
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

/** One level-0 chunk of a group, decoded; kept for neighbouring windows under the store's entity tag. */
function decodedChunk(deps: ChunkReadDeps, plan: WindowPlan, block: number, c: number): Promise<DigitalArray> {
  const { group, store } = plan;
  const objectKey = `${store.prefix}${group.name}/0/c/${block}/${c}`;
  const bytesPerSample = group.dtype === 'int16' ? 2 : group.dtype === 'float64' ? 8 : 4;
  const rowsInBlock = Math.min(group.chunk_channels, group.n_channels - block * group.chunk_channels);
  return deps.recordingCaches.decodedChunks.get(`${store.etag}\0${objectKey}`, async () => {
    const frame = await deps.objects.readAll(objectKey);
    if (!frame) throw new NdsError('internal_error', { message: `A chunk of ${plan.datasetId}/${group.name} is missing.` });
    return typed(group.dtype, await decodeChunk(frame, rowsInBlock * group.chunk_samples * bytesPerSample));
  });
}

// One copy of the loop for each pair of chunk and answer array types. V8 compiles a loop for the array types it
// has seen: one that has met two (EDF's int16 and BDF's int32 in one server) ran 5× slower than one that met one,
// and this loop is the largest part of a window's cost. Each value is `digital × scale + offset` in float64,
// rounded once when stored in a float32 answer.
type Convert<Out> = (out: Out, at: number, digital: DigitalArray, base: number, from: number, to: number, scale: number, offset: number) => void;
const toFloat32: Record<string, Convert<Float32Array>> = {
  int16: (out, at, d, base, from, to, scale, offset) => { const digital = d as Int16Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
  int32: (out, at, d, base, from, to, scale, offset) => { const digital = d as Int32Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
  float32: (out, at, d, base, from, to, scale, offset) => { const digital = d as Float32Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
  float64: (out, at, d, base, from, to, scale, offset) => { const digital = d as Float64Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
};
const toFloat64: Record<string, Convert<Float64Array>> = {
  int16: (out, at, d, base, from, to, scale, offset) => { const digital = d as Int16Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
  int32: (out, at, d, base, from, to, scale, offset) => { const digital = d as Int32Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
  float32: (out, at, d, base, from, to, scale, offset) => { const digital = d as Float32Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
  float64: (out, at, d, base, from, to, scale, offset) => { const digital = d as Float64Array; for (let i = from; i < to; i++) out[at + i] = digital[base + i]! * scale + offset; },
};

/** The decoded chunks of row block `block` that hold samples `[first, end)`, in time order (the first is chunk `floor(first / chunk_samples)`). */
function blockChunks(deps: ChunkReadDeps, plan: WindowPlan, block: number, first: number, end: number): Promise<DigitalArray[]> {
  const cs = plan.group.chunk_samples;
  const chunks: number[] = [];
  for (let c = Math.floor(first / cs); c * cs < end; c++) chunks.push(c);
  return mapLimited(chunks, 8, (c) => decodedChunk(deps, plan, block, c));
}

const shortChunk = (plan: WindowPlan) => new NdsError('internal_error', { message: `A chunk of ${plan.datasetId}/${plan.group.name} is shorter than its metadata says.` });

/**
 * Physical samples `[first, end)` (clipped to the recording) of the group's channels `rows` (all in row block
 * `block`), from that block's `chunks` (of `blockChunks`), into `out`, row `k` at `k × (end - first)`. Each
 * value is computed in float64 and rounded once if `out` is float32.
 */
function convertRows(plan: WindowPlan, block: number, rows: number[], first: number, end: number, chunks: DigitalArray[], out: Float32Array | Float64Array): void {
  const { group } = plan;
  const cs = group.chunk_samples;
  const width = end - first;
  const c0 = Math.floor(first / cs);
  const dtype = group.dtype in toFloat32 ? group.dtype : 'int32';
  const convert32 = toFloat32[dtype]!;
  const convert64 = toFloat64[dtype]!;
  chunks.forEach((digital, i) => {
    const c = c0 + i;
    const chunkRows = Math.round(digital.length / cs);
    const from = Math.max(first, c * cs);
    const to = Math.min(end, (c + 1) * cs);
    for (let k = 0; k < rows.length; k++) {
      const row = rows[k]!;
      const r = row - block * group.chunk_channels;
      if (r >= chunkRows) throw shortChunk(plan);
      const { scale, offset } = group.channels[row]!;
      const base = r * cs - c * cs;
      if (out instanceof Float32Array) convert32(out, k * width - first, digital, base, from, to, scale, offset);
      else convert64(out, k * width - first, digital, base, from, to, scale, offset);
    }
  });
}

/** Most values in one piece of an answer: 256 KiB of float32, so a long window is never one large buffer. */
const PIECE_VALUES = 64 * 1024;

/** Consecutive runs of requested rows in one row block, read together; order is kept. */
function blockRuns(plan: WindowPlan): Array<{ index: number; block: number; rows: number[] }> {
  const runs: Array<{ index: number; block: number; rows: number[] }> = [];
  const per = plan.group.chunk_channels;
  let i = 0;
  while (i < plan.rows.length) {
    const block = Math.floor(plan.rows[i]! / per);
    let j = i;
    while (j < plan.rows.length && Math.floor(plan.rows[j]! / per) === block) j++;
    runs.push({ index: i, block, rows: plan.rows.slice(i, j) });
    i = j;
  }
  return runs;
}

/**
 * The window's channels at the answer's rate, in the order asked for, a few rows at a time: each yield is
 * `rows` consecutive rows of the answer back to back (`rows × plan.outCount` values, at most `PIECE_VALUES`
 * unless one row is longer), float32 when `dtype` says so and nothing is resampled (no float64 copy then),
 * float64 otherwise. A row block's chunks are decoded once for all its pieces.
 */
export async function* windowBlocks(deps: ChunkReadDeps, plan: WindowPlan, dtype: 'float32' | 'float64' = 'float64'): AsyncGenerator<{ index: number; rows: number; values: Float32Array | Float64Array }> {
  const { group } = plan;
  for (const run of blockRuns(plan)) {
    if (!plan.ratio) {
      const chunks = await blockChunks(deps, plan, run.block, plan.start, plan.start + plan.count);
      const perPiece = Math.max(1, Math.floor(PIECE_VALUES / plan.count));
      for (let i = 0; i < run.rows.length; i += perPiece) {
        const rows = run.rows.slice(i, i + perPiece);
        const values = dtype === 'float32' ? new Float32Array(rows.length * plan.count) : new Float64Array(rows.length * plan.count);
        convertRows(plan, run.block, rows, plan.start, plan.start + plan.count, chunks, values);
        yield { index: run.index + i, rows: rows.length, values };
      }
    } else {
      const n = run.rows.length;
      const span = inputSpan(plan.ratio, plan.outStart, plan.outCount);
      const first = Math.max(0, span.first);
      const end = Math.min(group.n_samples, span.end);
      const input = new Float64Array(n * (end - first));
      convertRows(plan, run.block, run.rows, first, end, await blockChunks(deps, plan, run.block, first, end), input);
      const values = dtype === 'float32' ? new Float32Array(n * plan.outCount) : new Float64Array(n * plan.outCount);
      // The filter is the costly part (up to MAX_RESAMPLE_WORK a window): it runs a slice of outputs at a time,
      // and other requests get the event loop between slices.
      const slice = Math.max(1, Math.floor(RESAMPLE_SLICE_WORK / (filterLength(plan.ratio) / plan.ratio.up)));
      for (let k = 0; k < n; k++) {
        const row = input.subarray(k * (end - first), (k + 1) * (end - first));
        for (let m = 0; m < plan.outCount; m += slice) {
          const count = Math.min(slice, plan.outCount - m);
          values.set(resampleSpan(plan.ratio, row, first, plan.outStart + m, count), k * plan.outCount + m);
          await nextTurn();
        }
      }
      yield { index: run.index, rows: n, values };
    }
  }
}

/** The window's channels as float64 rows at the answer's rate, in the order asked for. */
export async function* windowRows(deps: ChunkReadDeps, plan: WindowPlan): AsyncGenerator<{ index: number; values: Float64Array }> {
  for await (const { index, rows, values } of windowBlocks(deps, plan, 'float64')) {
    for (let k = 0; k < rows; k++) yield { index: index + k, values: (values as Float64Array).subarray(k * plan.outCount, (k + 1) * plan.outCount) };
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
export function windowStream(deps: ChunkReadDeps, plan: WindowPlan, format: 'npy' | 'f32', dtype: 'float32' | 'float64'): ReadableStream<Uint8Array> {
  const wide = format === 'npy' && dtype === 'float64';
  const blocks = windowBlocks(deps, plan, wide ? 'float64' : 'float32');
  let headerSent = format !== 'npy';
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headerSent) {
        headerSent = true;
        controller.enqueue(npyHeader(wide ? 'float64' : 'float32', [plan.rows.length, plan.outCount]));
        return;
      }
      try {
        const next = await blocks.next();
        if (next.done) return controller.close();
        const out = next.value.values;
        controller.enqueue(new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await blocks.return(undefined);
    },
  });
}

/** The whole `.npy` answer in one buffer, byte for byte what `windowStream(…, 'npy', dtype)` sends. */
export async function windowNpy(deps: ChunkReadDeps, plan: WindowPlan, dtype: 'float32' | 'float64' = 'float32'): Promise<Uint8Array> {
  const header = npyHeader(dtype, [plan.rows.length, plan.outCount]);
  const size = dtype === 'float32' ? 4 : 8;
  const out = new Uint8Array(header.byteLength + plan.rows.length * plan.outCount * size);
  out.set(header, 0);
  if (!plan.ratio && header.byteLength % size === 0) {
    // Straight into the answer's own bytes (the header is padded to 64 bytes): no piece arrays, no copy.
    const values = dtype === 'float32' ? new Float32Array(out.buffer, header.byteLength) : new Float64Array(out.buffer, header.byteLength);
    for (const run of blockRuns(plan)) {
      const chunks = await blockChunks(deps, plan, run.block, plan.start, plan.start + plan.count);
      convertRows(plan, run.block, run.rows, plan.start, plan.start + plan.count, chunks, values.subarray(run.index * plan.count, (run.index + run.rows.length) * plan.count));
    }
    return out;
  }
  let at = header.byteLength;
  for await (const { values } of windowBlocks(deps, plan, dtype)) {
    out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at);
    at += values.byteLength;
  }
  return out;
}

/** Samples of one row converted at a time by `windowNpyPieces`: 48 KiB of float32, below glibc's mmap threshold. */
const ROW_PIECE_SAMPLES = 12 * 1024;

/**
 * The `.npy` answer (float32, nothing resampled) byte for byte as `windowNpy` makes it, as pieces made on demand:
 * the header, then each row a few thousand samples at a time, converted into one small array used again for every
 * piece (each piece is valid until the next is asked for). Every chunk is read and checked here, so making the
 * pieces cannot fail. No array of the answer's size is ever made: under `nds serve`'s allocator settings
 * (`MALLOC_MMAP_THRESHOLD_`, decision 0015) each new array of 128 KiB or more is fresh memory from the kernel, and
 * writing 4 MB of it cost about 1,000 page faults and 20–30 ms a window (bench/RESULTS.md, issue 25).
 * `undefined` for a resampled window.
 */
export async function windowNpyPieces(deps: ChunkReadDeps, plan: WindowPlan): Promise<{ byteLength: number; pieces(): Generator<Uint8Array> } | undefined> {
  if (plan.ratio) return undefined;
  const { group } = plan;
  const cs = group.chunk_samples;
  const [first, end] = [plan.start, plan.start + plan.count];
  const c0 = Math.floor(first / cs);
  const runs = await Promise.all(
    blockRuns(plan).map(async (run) => {
      const chunks = await blockChunks(deps, plan, run.block, first, end);
      const lastRow = Math.max(...run.rows) - run.block * group.chunk_channels;
      if (chunks.some((digital) => lastRow >= Math.round(digital.length / cs))) throw shortChunk(plan);
      return { ...run, chunks };
    }),
  );
  const header = npyHeader('float32', [plan.rows.length, plan.outCount]);
  return {
    byteLength: header.byteLength + plan.rows.length * plan.count * 4,
    *pieces() {
      yield header;
      const scratch = new Float32Array(ROW_PIECE_SAMPLES);
      const bytes = new Uint8Array(scratch.buffer);
      for (const run of runs) {
        for (const row of run.rows) {
          for (let from = first; from < end; from += ROW_PIECE_SAMPLES) {
            const to = Math.min(end, from + ROW_PIECE_SAMPLES);
            const chunks = run.chunks.slice(Math.floor(from / cs) - c0, Math.ceil(to / cs) - c0);
            convertRows(plan, run.block, [row], from, to, chunks, scratch);
            yield bytes.subarray(0, (to - from) * 4);
          }
        }
      }
    },
  };
}

/** A small window as JSON numbers (float32 or float64 values, as asked). */
export async function windowJson(deps: ChunkReadDeps, plan: WindowPlan, dtype: 'float32' | 'float64'): Promise<number[][]> {
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
