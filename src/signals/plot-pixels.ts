/**
 * The plot's pixels of one frame, painted into a buffer of little-endian RGBA words: background, grid, event
 * spans and every row's column ranges. The viewer copies the buffer onto its canvas (`putImageData`); the
 * server's plots (`recordings/window-plot.ts`) write it into a PNG. Trace pixels are the rows' exact colours (no
 * antialiasing), so both draw the same pixels for the same frame. Pure.
 */
import type { ColumnEnvelope } from './column-envelope.js';
import type { EventPlacement } from './event-marks.js';
import { tickStep, type RowScale, type TraceLayout } from './trace-layout.js';

export interface DrawnRow {
  label: string;
  /** Second line under the label (the row's scale or range), shown when the row is tall enough. */
  detail: string;
  colour: string;
  envelope: ColumnEnvelope;
  scale: RowScale;
  /** Autoscaled rows stay inside their own row; fixed-scale rows may reach into their neighbours. */
  clipToRow: boolean;
}

export interface FrameInput {
  layout: TraceLayout;
  /** Seconds at the plot's left edge and seconds a pixel spans. */
  startSeconds: number;
  secondsPerPixel: number;
  rows: DrawnRow[];
  events: EventPlacement;
  /** A time as the user chose to read it, with the resolution of `step` seconds. */
  formatTime: (seconds: number, step: number) => string;
  /** Text beside the one-division scale bar (e.g. `100 µV`); no bar when undefined. */
  scaleBar?: string | undefined;
}

/** '#rrggbb' as a little-endian RGBA pixel, optionally mixed with white (alpha < 1). */
export function pixel(hex: string, alpha = 1, under = 0xff): number {
  const mix = (c: number, u: number) => Math.round(c * alpha + u * (1 - alpha));
  const r = mix(parseInt(hex.slice(1, 3), 16), under);
  const g = mix(parseInt(hex.slice(3, 5), 16), under);
  const b = mix(parseInt(hex.slice(5, 7), 16), under);
  return ((0xff << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

/** The top pixel row of the plot's buffer and its height: the buffer covers the plot's width and rows. */
export function plotBufferRows(l: TraceLayout): { top0: number; height: number } {
  const top0 = Math.floor(l.plotTop);
  return { top0, height: Math.max(1, Math.ceil(l.plotTop + l.plotHeight) - top0) };
}

/**
 * Paints the plot into `px` (`layout.plotWidth` × `plotBufferRows(layout).height` words, row by row; its top
 * left pixel is the canvas' (plotLeft, top0)). Filling 64 rows × 1,000+ columns this way takes a few
 * milliseconds, where as canvas rectangles it took most of a frame.
 */
export function paintPlotPixels(px: Uint32Array, f: FrameInput): void {
  const l = f.layout;
  const width = l.plotWidth;
  const { top0, height } = plotBufferRows(l);
  const white = pixel('#ffffff');
  px.fill(white);
  const step = tickStep(f.secondsPerPixel);
  const end = f.startSeconds + l.plotWidth * f.secondsPerPixel;
  const grid = pixel('#e4e4e4');
  for (let t = Math.ceil(f.startSeconds / step) * step; t <= end; t += step) {
    const x = Math.round((t - f.startSeconds) / f.secondsPerPixel);
    if (x < 0 || x >= width) continue;
    for (let y = 0; y < height; y++) px[y * width + x] = grid;
  }
  if (f.events.mode === 'lines') {
    for (const e of f.events.events) {
      if (e.x1 - e.x < 2) continue;
      const tint = pixel(e.colour, 0.1);
      const tintOnGrid = pixel(e.colour, 0.1, 0xe4);
      for (let x = Math.max(0, e.x - l.plotLeft); x < Math.min(width, e.x1 - l.plotLeft); x++) {
        for (let y = 0; y < height; y++) px[y * width + x] = px[y * width + x] === grid ? tintOnGrid : tint;
      }
    }
  }
  f.rows.forEach((row, i) => {
    const top = l.plotTop + i * l.rowHeight;
    // Autoscaled rows stay in their row; fixed-scale rows may reach into their neighbours, not past the plot.
    const clipTop = row.clipToRow ? Math.floor(top) : top0;
    const clipBottom = row.clipToRow ? Math.floor(top) + Math.ceil(l.rowHeight) - 1 : top0 + height - 1;
    const colour = pixel(row.colour);
    const { lo: los, hi: his } = row.envelope;
    const { baseline, pixelsPerUnit } = row.scale;
    const middle = top + l.rowHeight / 2;
    for (let x = 0; x < los.length && x < width; x++) {
      const lo = los[x]!;
      if (Number.isNaN(lo)) continue;
      const y0 = Math.round(middle - (his[x]! - baseline) * pixelsPerUnit);
      const y1 = Math.max(y0, Math.round(middle - (lo - baseline) * pixelsPerUnit));
      const from = Math.max(y0, clipTop) - top0;
      const to = Math.min(y1, clipBottom) - top0;
      // One stride a pixel down the column, not a multiplication: this loop is most of a frame's painting.
      for (let i = from * width + x, last = to * width + x; i <= last; i += width) px[i] = colour;
    }
  });
}

/**
 * Whether two frames paint the same plot pixels: the same layout, grid, event tints and rows (colour, clipping,
 * scale and every column's range). What `paintPlotPixels` reads and nothing else, so pixels painted ahead for
 * one frame can stand for another's exactly.
 */
export function samePlotPixels(a: FrameInput, b: FrameInput): boolean {
  const la = a.layout;
  const lb = b.layout;
  if (la.width !== lb.width || la.height !== lb.height || la.plotLeft !== lb.plotLeft || la.plotTop !== lb.plotTop) return false;
  if (la.plotWidth !== lb.plotWidth || la.plotHeight !== lb.plotHeight || la.rowHeight !== lb.rowHeight) return false;
  if (a.startSeconds !== b.startSeconds || a.secondsPerPixel !== b.secondsPerPixel || a.events.mode !== b.events.mode) return false;
  if (a.events.mode === 'lines') {
    if (a.events.events.length !== b.events.events.length) return false;
    for (let i = 0; i < a.events.events.length; i++) {
      const ea = a.events.events[i]!;
      const eb = b.events.events[i]!;
      if (ea.x !== eb.x || ea.x1 !== eb.x1 || ea.colour !== eb.colour) return false;
    }
  }
  if (a.rows.length !== b.rows.length) return false;
  for (let r = 0; r < a.rows.length; r++) {
    const ra = a.rows[r]!;
    const rb = b.rows[r]!;
    if (ra.colour !== rb.colour || ra.clipToRow !== rb.clipToRow) return false;
    if (ra.scale.baseline !== rb.scale.baseline || ra.scale.pixelsPerUnit !== rb.scale.pixelsPerUnit) return false;
    if (!sameValues(ra.envelope.lo, rb.envelope.lo) || !sameValues(ra.envelope.hi, rb.envelope.hi)) return false;
  }
  return true;
}

/** Equal arrays, NaN equal to NaN (a column not drawn). */
function sameValues(a: Float64Array, b: Float64Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x !== y && !(x !== x && y !== y)) return false;
  }
  return true;
}
