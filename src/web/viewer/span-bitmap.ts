/**
 * The annotation spans of a frame as one bitmap of one pixel per page row and plot column, which painting
 * stretches onto the plot with one `drawImage`. Drawn as canvas paths instead, the bands (a translucent fill
 * per label's colour over hundreds of spans, a third of them the plot's full height) and their one-pixel edges
 * took ~8 ms a frame to rasterize at 300 spans in view, after the frame's own code had run; composed here, the
 * work is one pass over rows × columns whatever the number of spans, and a copy.
 *
 * What it draws is what the paths drew: colour by colour in order of first appearance, the union of that
 * colour's bands at `bandAlpha`, then the union of its edges at `edgeAlpha` — a band for all channels covers
 * every row of its columns. Pure (no DOM): the pixels are ImageData's straight RGBA bytes.
 */
import type { DrawnAnnotation } from './annotation-marks.js';

export const bandAlpha = 0.18;
export const edgeAlpha = 0.85;

export interface SpanBitmap {
  width: number;
  rows: number;
  /**
   * `rows × width` pixels, RGBA bytes read as little-endian words (ImageData's buffer as an Int32Array: signed,
   * so that a pixel is a small integer to the engine, never a boxed number past 2^31).
   */
  pixels: Int32Array;
}

/** Colours told apart in one frame (two bits each in a 32-bit word: band, edge); the palette has 8. */
const MAX_COLOURS = 16;

let rowBits = new Int32Array(0);
let columnBits = new Int32Array(0);
let columnPixels = new Int32Array(0);
let pixels = new Int32Array(0);
/** The pixel each set of bits composes to (8 colours: 16 bits), valid for the call whose `generation` it holds. */
const memoPixel = new Int32Array(1 << 16);
const memoGeneration = new Int32Array(1 << 16);
let generation = 0;

/**
 * The bitmap of `spans` (their `x0`, `x1` from the canvas' left edge, `plotLeft` being the plot's) over `width`
 * columns and `rows` page rows, into `into` (an ImageData's buffer) when given, else into a buffer the next call
 * reuses: read it before.
 */
export function spanBitmap(spans: readonly DrawnAnnotation[], plotLeft: number, width: number, rows: number, into?: Int32Array): SpanBitmap {
  const size = rows * width;
  if (rowBits.length < size) rowBits = new Int32Array(size);
  if (!into && pixels.length < size) pixels = new Int32Array(size);
  if (columnBits.length < width) {
    columnBits = new Int32Array(width);
    columnPixels = new Int32Array(width);
  }
  // Locals: the loops below run over every covered pixel.
  const cells = rowBits;
  const columns = columnBits;
  const out = into ?? pixels;
  const columnOut = columnPixels;
  cells.fill(0, 0, size);
  columns.fill(0, 0, width);
  // Which of the frame's colours each pixel (or, for all channels, each column) has a band and an edge of.
  const colours: string[] = [];
  const colourIndex = new Map<string, number>();
  for (const a of spans) {
    let k = colourIndex.get(a.colour);
    if (k === undefined) {
      k = Math.min(colours.length, MAX_COLOURS - 1);
      if (colours.length < MAX_COLOURS) colours.push(a.colour);
      colourIndex.set(a.colour, k);
    }
    const band = 1 << (2 * k);
    const edge = band << 1;
    const start = a.x0 - plotLeft;
    const end = start + Math.max(2, a.x1 - a.x0);
    const from = Math.max(0, start);
    const to = Math.min(width, end);
    if (to <= from) continue;
    const firstEdge = start >= 0 ? start : -1;
    const lastEdge = end - 1 < width ? end - 1 : -1;
    if (a.channels === null) {
      for (let x = from; x < to; x++) columns[x]! |= band;
      if (firstEdge >= 0) columns[firstEdge]! |= edge;
      if (lastEdge >= 0) columns[lastEdge]! |= edge;
      continue;
    }
    const onRows = a.rows;
    for (let i = 0; i < onRows.length; i++) {
      const row = onRows[i]!;
      if (row < 0 || row >= rows) continue;
      const at = row * width;
      for (let x = at + from, stop = at + to; x < stop; x++) cells[x]! |= band;
      if (firstEdge >= 0) cells[at + firstEdge]! |= edge;
      if (lastEdge >= 0) cells[at + lastEdge]! |= edge;
    }
  }
  // A pixel's colour depends only on its bits: each set of bits is composed once, and a run of equal bits
  // along a row (a band is tens of columns wide) is looked up once.
  const rgb = colours.map(parseColour);
  // Up to 8 colours the bits index a table; more (never with the palette's 8) fall back to a map.
  generation = (generation + 1) | 0;
  const table = colours.length <= 8;
  const composed = new Map<number, number>();
  const pixelOf = (bits: number): number => {
    if (table) {
      if (memoGeneration[bits] !== generation) {
        memoGeneration[bits] = generation;
        memoPixel[bits] = compose(bits, rgb);
      }
      return memoPixel[bits]!;
    }
    let pixel = composed.get(bits);
    if (pixel === undefined) {
      pixel = compose(bits, rgb);
      composed.set(bits, pixel);
    }
    return pixel;
  };
  let lastBits = 0;
  let lastPixel = 0;
  for (let x = 0; x < width; x++) {
    const bits = columns[x]!;
    if (bits !== lastBits) {
      lastBits = bits;
      lastPixel = pixelOf(bits);
    }
    columnOut[x] = lastPixel;
  }
  for (let row = 0, at = 0; row < rows; row++) {
    for (let x = 0; x < width; x++, at++) {
      const own = cells[at]!;
      if (own === 0) {
        out[at] = columnOut[x]!;
        continue;
      }
      const bits = own | columns[x]!;
      if (bits !== lastBits) {
        lastBits = bits;
        lastPixel = pixelOf(bits);
      }
      out[at] = lastPixel;
    }
  }
  return { width, rows, pixels: out.subarray(0, size) };
}

/** Source-over, colour by colour, band then edge: premultiplied, then back to straight RGBA bytes. */
function compose(bits: number, rgb: ReadonlyArray<readonly [number, number, number]>): number {
  let r = 0;
  let g = 0;
  let b = 0;
  let a = 0;
  for (let layer = 0; layer < 2 * rgb.length; layer++) {
    if ((bits & (1 << layer)) === 0) continue;
    // Even bits are a colour's band, odd ones its edge, drawn over it.
    const alpha = layer % 2 === 0 ? bandAlpha : edgeAlpha;
    const [cr, cg, cb] = rgb[layer >> 1]!;
    r = cr * alpha + r * (1 - alpha);
    g = cg * alpha + g * (1 - alpha);
    b = cb * alpha + b * (1 - alpha);
    a = alpha + a * (1 - alpha);
  }
  if (a === 0) return 0;
  const byte = (v: number) => Math.min(255, Math.max(0, Math.round(v)));
  return (byte(a * 255) << 24) | (byte(b / a) << 16) | (byte(g / a) << 8) | byte(r / a);
}

/** `#rrggbb` → [r, g, b] in 0–255. */
function parseColour(colour: string): [number, number, number] {
  const hex = /^#([0-9a-f]{6})$/i.exec(colour)?.[1] ?? '000000';
  return [parseInt(hex.slice(0, 2), 16), parseInt(hex.slice(2, 4), 16), parseInt(hex.slice(4, 6), 16)];
}
