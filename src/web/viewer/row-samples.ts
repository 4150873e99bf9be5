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

/** The source channels' samples, kept between calls (the rows are computed from them into a buffer of their own). */
let scratch = new Float64Array(0);
