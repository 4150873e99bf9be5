/**
 * Rows at a view level: the stored min/max envelope of each row's recorded channel, as pixel columns and as
 * the [min, max] pairs the frame exposes. Montages and filters need samples and do not apply here.
 */
import { columnEnvelope, type ColumnEnvelope, type ColumnEnvelopeInput, type ColumnReader } from '../../signals/column-envelope.js';
import type { ChannelMeta, DecodedChunk } from './recording-store.js';

export function viewLevelRow(
  meta: ChannelMeta,
  read: ColumnReader,
  view: Pick<ColumnEnvelopeInput, 'start' | 'samplesPerPixel' | 'pixelWidth' | 'factor' | 'levelColumns'>,
  firstColumn: number,
  lastColumn: number,
): { envelope: ColumnEnvelope; pairs: Float64Array } {
  const envelope = columnEnvelope({ ...view, scale: meta.scale, offset: meta.offset, read });
  const pairs = new Float64Array(2 * Math.max(0, lastColumn - firstColumn)).fill(NaN);
  for (let i = firstColumn; i < lastColumn; i++) {
    const v = read(i);
    if (!v) continue;
    const a = v[0] * meta.scale + meta.offset;
    const b = v[1] * meta.scale + meta.offset;
    pairs[2 * (i - firstColumn)] = Math.min(a, b);
    pairs[2 * (i - firstColumn) + 1] = Math.max(a, b);
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

