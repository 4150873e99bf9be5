/**
 * Turns the samples (level 0) or min/max envelopes (view levels) of one channel into one value range per
 * pixel column, in physical units. Pure: the drawing code and the tests both use it.
 */

/** Digital [min, max] of column `i` of the level, or undefined when its chunk is not loaded. */
export type ColumnReader = (i: number) => readonly [number, number] | undefined;

export interface ColumnEnvelopeInput {
  /** First level-0 sample at the plot's left edge (fractional allowed). */
  start: number;
  /** Level-0 samples a pixel column spans. */
  samplesPerPixel: number;
  pixelWidth: number;
  /** Level-0 samples a column of the level stands for (4^L). */
  factor: number;
  /** Columns the level holds. */
  levelColumns: number;
  scale: number;
  offset: number;
  read: ColumnReader;
}

export interface ColumnEnvelope {
  /** Physical minimum and maximum drawn in each pixel column; NaN where nothing is drawn. */
  lo: Float64Array;
  hi: Float64Array;
}

/**
 * Each pixel column covers the level columns its time span overlaps, so zooming past one sample a pixel
 * repeats a sample rather than inventing values. A column's range is then widened to meet its left
 * neighbour's, so a steep edge stays one connected stroke.
 */
export function columnEnvelope(input: ColumnEnvelopeInput): ColumnEnvelope {
  const { pixelWidth, factor, levelColumns, scale, offset, read } = input;
  const lo = new Float64Array(pixelWidth).fill(NaN);
  const hi = new Float64Array(pixelWidth).fill(NaN);
  for (let x = 0; x < pixelWidth; x++) {
    const t0 = input.start + x * input.samplesPerPixel;
    const t1 = t0 + input.samplesPerPixel;
    const first = Math.max(0, Math.floor(t0 / factor));
    const last = Math.min(levelColumns - 1, Math.max(Math.floor(t0 / factor), Math.ceil(t1 / factor) - 1));
    if (t1 <= 0 || first > last || t0 >= levelColumns * factor) continue;
    let dMin = Infinity;
    let dMax = -Infinity;
    let missing = false;
    for (let i = first; i <= last; i++) {
      const range = read(i);
      if (!range) {
        missing = true;
        break;
      }
      if (range[0] < dMin) dMin = range[0];
      if (range[1] > dMax) dMax = range[1];
    }
    if (missing) continue;
    const a = dMin * scale + offset;
    const b = dMax * scale + offset;
    lo[x] = Math.min(a, b);
    hi[x] = Math.max(a, b);
  }
  for (let x = pixelWidth - 1; x > 0; x--) {
    if (Number.isNaN(lo[x]!) || Number.isNaN(lo[x - 1]!)) continue;
    if (lo[x]! > hi[x - 1]!) lo[x] = hi[x - 1]!;
    if (hi[x]! < lo[x - 1]!) hi[x] = lo[x - 1]!;
  }
  return { lo, hi };
}

/** The physical range over the drawn columns (for per-channel autoscale); undefined when nothing is drawn. */
export function envelopeRange(envelope: ColumnEnvelope): [number, number] | undefined {
  let min = Infinity;
  let max = -Infinity;
  for (let x = 0; x < envelope.lo.length; x++) {
    if (envelope.lo[x]! < min) min = envelope.lo[x]!;
    if (envelope.hi[x]! > max) max = envelope.hi[x]!;
  }
  return min <= max ? [min, max] : undefined;
}

/**
 * The samples [first, last] each pixel column covers at level 0, as `columnEnvelope` places them: `first` is -1
 * where the column is not drawn (before the recording, past it, or reaching past the samples [from, end) in
 * memory). The same for every row of a frame, so the viewer works them out once a frame, not once a row.
 */
export interface ColumnSpans {
  first: Int32Array;
  last: Int32Array;
}

export function columnSpans(from: number, end: number, start: number, samplesPerPixel: number, pixelWidth: number, nSamples: number, into?: ColumnSpans): ColumnSpans {
  const reuse = into !== undefined && into.first.length === pixelWidth;
  const firsts = reuse ? into.first : new Int32Array(pixelWidth);
  const lasts = reuse ? into.last : new Int32Array(pixelWidth);
  for (let x = 0; x < pixelWidth; x++) {
    const t0 = start + x * samplesPerPixel;
    const t1 = t0 + samplesPerPixel;
    const first = Math.max(0, Math.floor(t0));
    const last = Math.min(nSamples - 1, Math.max(Math.floor(t0), Math.ceil(t1) - 1));
    // A column reaching past the samples in memory is not drawn, as with a chunk not loaded.
    const drawn = !(t1 <= 0 || first > last || t0 >= nSamples) && first >= from && last < end;
    firsts[x] = drawn ? first - from : -1;
    lasts[x] = drawn ? last - from : -1;
  }
  return { first: firsts, last: lasts };
}

/**
 * `columnEnvelope` at level 0 over samples already in memory (`values[i - from]` is sample i), without a
 * reader call per sample: the same columns, the same widening, a fraction of the time for 64 rows a frame.
 * NaN samples (not loaded) leave their column empty. `spans`: the frame's `columnSpans` for these arguments,
 * when the caller has them.
 */
export function sampleEnvelope(values: Float64Array, from: number, start: number, samplesPerPixel: number, pixelWidth: number, nSamples: number, into?: ColumnEnvelope, spans?: ColumnSpans): ColumnEnvelope {
  const { first: firsts, last: lasts } = spans ?? columnSpans(from, from + values.length, start, samplesPerPixel, pixelWidth, nSamples);
  // `into`: the arrays of an earlier frame, refilled rather than two new arrays per row per frame.
  const reuse = into !== undefined && into.lo.length === pixelWidth && into.hi.length === pixelWidth;
  const lo = reuse ? into.lo : new Float64Array(pixelWidth);
  const hi = reuse ? into.hi : new Float64Array(pixelWidth);
  for (let x = 0; x < pixelWidth; x++) {
    const first = firsts[x]!;
    const last = lasts[x]!;
    let min = Infinity;
    let max = -Infinity;
    for (let i = first; i <= last && i >= 0; i++) {
      const v = values[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    // Comparisons with NaN are false: a column of NaN keeps min > max and stays empty.
    if (first < 0 || min > max || Number.isNaN(values[first]!)) {
      lo[x] = NaN;
      hi[x] = NaN;
    } else {
      lo[x] = min;
      hi[x] = max;
    }
  }
  for (let x = pixelWidth - 1; x > 0; x--) {
    if (Number.isNaN(lo[x]!) || Number.isNaN(lo[x - 1]!)) continue;
    if (lo[x]! > hi[x - 1]!) lo[x] = hi[x - 1]!;
    if (hi[x]! < lo[x - 1]!) hi[x] = lo[x - 1]!;
  }
  return { lo, hi };
}
