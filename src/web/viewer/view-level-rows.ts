/**
 * Rows at a view level: the stored min/max envelopes of each row's channels, as pixel columns and as the
 * [min, max] pairs the frame exposes. A montage row is the bound of its derivation over each column
 * (`derivationBound`): its own label and no narrower than the row is; filters need samples and do not apply here.
 */
import { columnEnvelope, type ColumnEnvelope, type ColumnEnvelopeInput, type ColumnReader } from '../../signals/column-envelope.js';
import { derivationBound, type Derivation } from '../../signals/montage.js';
import type { ChannelMeta, DecodedChunk } from './recording-store.js';

/** A channel's column reader in physical units, [min, max] ordered (a negative scale swaps them). */
export function physicalReader(meta: Pick<ChannelMeta, 'scale' | 'offset'>, read: ColumnReader): ColumnReader {
  const pair: [number, number] = [0, 0];
  return (i) => {
    const v = read(i);
    if (!v) return undefined;
    const a = v[0] * meta.scale + meta.offset;
    const b = v[1] * meta.scale + meta.offset;
    pair[0] = Math.min(a, b);
    pair[1] = Math.max(a, b);
    return pair;
  };
}

/** A derivation's column reader in physical units, from its channels' physical readers. */
export function derivationReader(row: Pick<Derivation, 'plus' | 'minus'>, reader: (channel: number) => ColumnReader): ColumnReader {
  const plus = reader(row.plus);
  if (row.minus.length === 0) return plus;
  const minus = row.minus.map(reader);
  const ranges: Array<[number, number]> = row.minus.map(() => [0, 0]);
  return (i) => {
    const p = plus(i);
    if (!p) return undefined;
    for (let k = 0; k < minus.length; k++) {
      const m = minus[k]!(i);
      if (!m) return undefined;
      ranges[k]![0] = m[0];
      ranges[k]![1] = m[1];
    }
    return derivationBound(p, ranges);
  };
}

/** One row from a physical column reader: its pixel columns and its [min, max] pairs over [firstColumn, lastColumn). */
export function viewLevelRow(
  read: ColumnReader,
  view: Pick<ColumnEnvelopeInput, 'start' | 'samplesPerPixel' | 'pixelWidth' | 'factor' | 'levelColumns'>,
  firstColumn: number,
  lastColumn: number,
): { envelope: ColumnEnvelope; pairs: Float64Array } {
  const envelope = columnEnvelope({ ...view, scale: 1, offset: 0, read });
  const pairs = new Float64Array(2 * Math.max(0, lastColumn - firstColumn)).fill(NaN);
  for (let i = firstColumn; i < lastColumn; i++) {
    const v = read(i);
    if (!v) continue;
    pairs[2 * (i - firstColumn)] = v[0];
    pairs[2 * (i - firstColumn) + 1] = v[1];
  }
  return { envelope, pairs };
}

/**
 * Reads column `i` of one channel of a view level from its loaded chunks: [min, max] in digital units.
 * The frame reads tens of thousands of columns, so it reuses one pair (the caller copies the values out).
 */
export function columnReader(chunk: (cc: number, tc: number) => DecodedChunk | undefined, cc: number, chunkColumns: number, level: number, c: number): ColumnReader {
  const pair: [number, number] = [0, 0];
  // Consecutive columns share a chunk: look it up once per chunk, not once per column.
  let heldChunk = -1;
  let held: DecodedChunk | undefined;
  return (i) => {
    const tc = Math.floor(i / chunkColumns);
    if (tc !== heldChunk) {
      heldChunk = tc;
      held = chunk(cc, tc);
    }
    const data = held;
    if (!data) return undefined;
    const t = i % chunkColumns;
    if (level === 0) {
      pair[0] = pair[1] = data.data[c * data.stride[0]! + t * data.stride[1]!]!;
    } else {
      const at = c * data.stride[1]! + t * data.stride[2]!;
      pair[0] = data.data[at]!;
      pair[1] = data.data[data.stride[0]! + at]!;
    }
    return pair;
  };
}

