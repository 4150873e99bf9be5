/**
 * The samples of each drawn row at level 0: source channels read from the decoded chunks in physical units,
 * combined by the montage, then filtered zero-phase over a span wider than the window (the margin), so the
 * filters' start-up lies outside what is drawn. Pure given the chunk lookup.
 */
import { filtfiltInPlace, type Biquad } from '../../signals/iir-filter.js';
import { applyMontage, sourcesOf, type Derivation } from '../../signals/montage.js';
import type { ChannelMeta, DecodedChunk } from './recording-store.js';

export interface RowSamplesInput {
  channels: readonly ChannelMeta[];
  rows: readonly Derivation[];
  /** Level-0 samples [from, to) to compute (chunk aligned by the caller so the result can be reused). */
  from: number;
  to: number;
  channelsPerChunk: number;
  chunkColumns: number;
  chunk: (channelChunk: number, timeChunk: number) => DecodedChunk | undefined;
  sections: readonly Biquad[];
  /** Odd-reflection padding where the span meets the recording's ends. */
  pad: number;
}

export interface RowSamples {
  from: number;
  to: number;
  /** One array per row, `to − from` long; NaN where a chunk is not loaded yet. */
  rows: Float64Array[];
  /** Every chunk was loaded (only then are the filters applied). */
  complete: boolean;
  /**
   * Each row's running sums (`sums[k][i]`: the first i samples), made on a row's first `windowMean` when
   * complete: a pan's fixed-scale baselines then cost two reads a row instead of a pass over the window.
   */
  sums?: Array<Float64Array | undefined>;
}

export function rowSamples(input: RowSamplesInput): RowSamples {
  const { from, to, channelsPerChunk: cpc, chunkColumns: cols } = input;
  const length = Math.max(0, to - from);
  const source = new Map<number, Float64Array>();
  const sources = sourcesOf(input.rows);
  if (scratch.length < sources.length * length) scratch = new Float64Array(sources.length * length);
  let complete = true;
  for (const [k, s] of sources.entries()) {
    const meta = input.channels[s]!;
    const out = scratch.subarray(k * length, (k + 1) * length).fill(NaN);
    const cc = Math.floor(s / cpc);
    const c = s % cpc;
    for (let tc = Math.floor(from / cols); tc * cols < to; tc++) {
      const chunk = input.chunk(cc, tc);
      if (!chunk) {
        complete = false;
        continue;
      }
      const [s0, s1] = chunk.stride as [number, number];
      const data = chunk.data;
      const first = Math.max(from, tc * cols);
      const last = Math.min(to, (tc + 1) * cols);
      const base = c * s0 - tc * cols * s1;
      const { scale, offset } = meta;
      for (let i = first; i < last; i++) out[i - from] = data[base + i * s1]! * scale + offset;
    }
    source.set(s, out);
  }
  const rows = applyMontage(input.rows, source, length);
  if (complete) for (const row of rows) filtfiltInPlace(row, input.sections, input.pad);
  return { from, to, rows, complete };
}

/**
 * The mean of row `row` over samples [first, last) (inside the span); NaN samples are left out, and a window
 * with none is 0. From the row's running sums when the span is complete (no NaN in it).
 */
export function windowMean(samples: RowSamples, row: number, first: number, last: number): number {
  const values = samples.rows[row]!;
  // Clamped to the span, as `subarray` clamps.
  const a = Math.max(0, Math.min(values.length, first - samples.from));
  const b = Math.max(a, Math.min(values.length, last - samples.from));
  if (b <= a) return 0;
  if (!samples.complete) {
    let sum = 0;
    let n = 0;
    for (let i = a; i < b; i++) {
      const v = values[i]!;
      if (v !== v) continue;
      sum += v;
      n++;
    }
    return n ? sum / n : 0;
  }
  samples.sums ??= [];
  let sums = samples.sums[row];
  if (!sums) {
    sums = new Float64Array(values.length + 1);
    for (let i = 0, sum = 0; i < values.length; i++) sums[i + 1] = sum += values[i]!;
    samples.sums[row] = sums;
  }
  return (sums[b]! - sums[a]!) / (b - a);
}

/** The source channels' samples, kept between calls (the rows are computed from them into a buffer of their own). */
let scratch = new Float64Array(0);
