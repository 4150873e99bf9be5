/**
 * One level of the min/max view pyramid, built incrementally: it takes columns from the level below (at
 * level 1, raw samples, where min = max = the sample), folds each 4 into one, and writes a chunk of
 * [2, n_channels, 1024] (min plane, then max plane) whenever 1024 columns are done, handing them up.
 * Values stay in the level-0 digital type, so level 0's scale and offset apply to every level.
 */
import type { SampleArray, SampleType } from '../types.js';
import { giveBack, lendSamples } from '../sample-buffers.js';
import { foldSimd } from './fold-simd.js';

export const viewDownsample = 4;
export const viewChunkColumns = 1024;

/** Input rows: channels [channelStart, channelStart + rows) at `min[r * stride + start + i]` (and `max`). */
export interface EnvelopeInput {
  channelStart: number;
  rows: number;
  min: SampleArray;
  max: SampleArray;
  stride: number;
  start: number;
}

export type ChunkWriter = (level: number, chunkIndex: number, chunk: SampleArray) => Promise<void>;

export class EnvelopeLevel {
  readonly level: number;
  readonly #nChannels: number;
  readonly #buffer: SampleArray;
  readonly #curMin: Float64Array;
  readonly #curMax: Float64Array;
  readonly #next: EnvelopeLevel | undefined;
  readonly #write: ChunkWriter;
  /** Input items consumed so far. */
  #consumed = 0;
  #chunkIndex = 0;

  constructor(level: number, nChannels: number, type: SampleType, next: EnvelopeLevel | undefined, write: ChunkWriter) {
    this.level = level;
    this.#nChannels = nChannels;
    this.#buffer = lendSamples(type, 2 * nChannels * viewChunkColumns);
    this.#curMin = new Float64Array(nChannels);
    this.#curMax = new Float64Array(nChannels);
    this.#next = next;
    this.#write = write;
  }

  /** Folds `count` input items of every input row block (together they must cover all channels). */
  async push(inputs: readonly EnvelopeInput[], count: number): Promise<void> {
    const perChunk = viewChunkColumns * viewDownsample;
    let done = 0;
    while (done < count) {
      const piece = Math.min(count - done, (this.#chunkIndex + 1) * perChunk - this.#consumed);
      for (const input of inputs) this.#fold(input, done, piece);
      this.#consumed += piece;
      done += piece;
      if (this.#consumed === (this.#chunkIndex + 1) * perChunk) await this.#flush(viewChunkColumns);
    }
  }

  /** Writes the last, partial chunk and finishes the levels above. */
  async finish(): Promise<void> {
    const columns = Math.ceil((this.#consumed - this.#chunkIndex * viewChunkColumns * viewDownsample) / viewDownsample);
    if (columns > 0) {
      const plane = this.#nChannels * viewChunkColumns;
      for (let c = 0; c < this.#nChannels; c++) {
        this.#buffer.fill(0, c * viewChunkColumns + columns, (c + 1) * viewChunkColumns);
        this.#buffer.fill(0, plane + c * viewChunkColumns + columns, plane + (c + 1) * viewChunkColumns);
      }
      await this.#flush(columns);
    }
    await this.#next?.finish();
  }

  /** Gives back this level's buffer and those of the levels above; none of them can be used afterwards. */
  release(): void {
    giveBack(this.#buffer);
    this.#next?.release();
  }

  #fold(input: EnvelopeInput, offset: number, count: number): void {
    const buffer = this.#buffer;
    const plane = this.#nChannels * viewChunkColumns;
    const base = this.#chunkIndex * viewChunkColumns;
    const curMin = this.#curMin;
    const curMax = this.#curMax;
    if (this.#consumed % 4 === 0 && count % 4 === 0) {
      this.#foldAligned(input, offset, count);
      return;
    }
    for (let r = 0; r < input.rows; r++) {
      const c = input.channelStart + r;
      const src = r * input.stride + input.start + offset;
      const minSrc = input.min;
      const maxSrc = input.max;
      let k = this.#consumed % 4;
      let column = Math.floor(this.#consumed / 4) - base;
      let mn = curMin[c]!;
      let mx = curMax[c]!;
      const outMin = c * viewChunkColumns;
      const outMax = plane + outMin;
      for (let i = 0; i < count; i++) {
        const a = minSrc[src + i]!;
        const b = maxSrc[src + i]!;
        if (k === 0) {
          mn = a;
          mx = b;
        } else {
          if (a < mn) mn = a;
          if (b > mx) mx = b;
        }
        if (++k === 4) {
          buffer[outMin + column] = mn;
          buffer[outMax + column] = mx;
          column++;
          k = 0;
        }
      }
      if (k !== 0) {
        // A partial column: written now so that `finish` can flush it as it is.
        buffer[outMin + column] = mn;
        buffer[outMax + column] = mx;
      }
      curMin[c] = mn;
      curMax[c] = mx;
    }
  }

  /**
   * On a column boundary, four inputs a column: raw samples (level 1, where `min` is `max`: the hot path) or
   * the min/max columns of the level below.
   */
  #foldAligned(input: EnvelopeInput, offset: number, count: number): void {
    const buffer = this.#buffer;
    const plane = this.#nChannels * viewChunkColumns;
    const first = Math.floor(this.#consumed / 4) - this.#chunkIndex * viewChunkColumns;
    const fromSamples = input.min === input.max;
    for (let r = 0; r < input.rows; r++) {
      const p = r * input.stride + input.start + offset;
      const outMin = (input.channelStart + r) * viewChunkColumns + first;
      // WebAssembly SIMD as far as whole vectors go (16- and 32-bit samples), JavaScript for the rest.
      const from = foldSimd ? foldSimd(input.min, input.max, p, p + count, buffer, outMin, plane + outMin) : p;
      const skipped = (from - p) / 4;
      if (fromSamples) foldSamples(input.min, from, p + count, buffer, outMin + skipped, plane + outMin + skipped);
      else foldColumns(input.min, input.max, from, p + count, buffer, outMin + skipped, plane + outMin + skipped);
    }
  }

  async #flush(columns: number): Promise<void> {
    await this.#write(this.level, this.#chunkIndex, this.#buffer);
    if (this.#next) {
      const plane = this.#nChannels * viewChunkColumns;
      const mins = this.#buffer.subarray(0, plane) as SampleArray;
      const maxs = this.#buffer.subarray(plane) as SampleArray;
      await this.#next.push([{ channelStart: 0, rows: this.#nChannels, min: mins, max: maxs, stride: viewChunkColumns, start: 0 }], columns);
    }
    this.#chunkIndex++;
  }
}

/** Number of view levels: levels 1.. until one has at most 512 columns; none when level 0 already has. */
export function viewLevelCount(nSamples: number): number {
  let levels = 0;
  let length = nSamples;
  while (length > 512) {
    length = Math.ceil(length / viewDownsample);
    levels++;
  }
  return levels;
}

/** Four samples a column: the minimum and the maximum of each group of four, into the two planes. */
function foldSamples(src: SampleArray, p: number, end: number, out: SampleArray, outMin: number, outMax: number): void {
  for (; p < end; p += 4) {
    const a = src[p]!;
    const b = src[p + 1]!;
    const d = src[p + 2]!;
    const e = src[p + 3]!;
    let lo = a < b ? a : b;
    let hi = a < b ? b : a;
    const lo2 = d < e ? d : e;
    const hi2 = d < e ? e : d;
    if (lo2 < lo) lo = lo2;
    if (hi2 > hi) hi = hi2;
    out[outMin++] = lo;
    out[outMax++] = hi;
  }
}

/** Four columns a column: the least of four minima and the greatest of four maxima. */
function foldColumns(mins: SampleArray, maxs: SampleArray, p: number, end: number, out: SampleArray, outMin: number, outMax: number): void {
  for (; p < end; p += 4) {
    let lo = mins[p]!;
    let hi = maxs[p]!;
    const lo1 = mins[p + 1]!;
    const hi1 = maxs[p + 1]!;
    const lo2 = mins[p + 2]!;
    const hi2 = maxs[p + 2]!;
    const lo3 = mins[p + 3]!;
    const hi3 = maxs[p + 3]!;
    if (lo1 < lo) lo = lo1;
    if (lo2 < lo) lo = lo2;
    if (lo3 < lo) lo = lo3;
    if (hi1 > hi) hi = hi1;
    if (hi2 > hi) hi = hi2;
    if (hi3 > hi) hi = hi3;
    out[outMin++] = lo;
    out[outMax++] = hi;
  }
}
