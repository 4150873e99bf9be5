/** Paints one frame of the viewer onto a 2D canvas: grid and time axis, events, labels, traces, scale bar. */
import type { ColumnEnvelope } from './column-envelope.js';
import type { EventPlacement } from './event-marks.js';
import { placeEventLabels, tickStep, type RowScale, type TraceLayout } from './trace-layout.js';

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

export function drawFrame(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const { layout: l } = f;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, l.width, l.height);
  drawPlotPixels(ctx, f);
  drawTimeLabels(ctx, f);
  ctx.font = '12px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  const labelWidth = l.plotLeft - 24;
  f.rows.forEach((row, i) => {
    const top = l.plotTop + i * l.rowHeight;
    const twoLines = l.rowHeight > 28 && row.detail !== '';
    ctx.fillStyle = row.colour;
    ctx.fillText(row.label, 6, top + l.rowHeight / 2 - (twoLines ? 7 : 0), labelWidth);
    if (twoLines) {
      ctx.fillStyle = '#666666';
      ctx.fillText(row.detail, 6, top + l.rowHeight / 2 + 8, labelWidth);
    }
  });
  drawEventsOver(ctx, f);
  if (f.scaleBar !== undefined && f.rows.length > 0) drawScaleBar(ctx, l, f.scaleBar);
}

/** '#rrggbb' as a little-endian RGBA pixel, optionally mixed with white (alpha < 1). */
function pixel(hex: string, alpha = 1, under = 0xff): number {
  const mix = (c: number, u: number) => Math.round(c * alpha + u * (1 - alpha));
  const r = mix(parseInt(hex.slice(1, 3), 16), under);
  const g = mix(parseInt(hex.slice(3, 5), 16), under);
  const b = mix(parseInt(hex.slice(5, 7), 16), under);
  return ((0xff << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

let buffer: ImageData | undefined;

/**
 * The plot's pixels in one buffer, written with one `putImageData`: background, grid, event spans and every
 * row's column ranges. Filling 64 rows × 1,000+ columns this way takes a few milliseconds, where as canvas
 * rectangles it took most of a frame. Trace pixels are the rows' exact colours (no antialiasing).
 */
function drawPlotPixels(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const l = f.layout;
  const width = l.plotWidth;
  const top0 = Math.floor(l.plotTop);
  const height = Math.max(1, Math.ceil(l.plotTop + l.plotHeight) - top0);
  if (!buffer || buffer.width !== width || buffer.height !== height) buffer = ctx.createImageData(width, height);
  const px = new Uint32Array(buffer.data.buffer);
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
      for (let y = from; y <= to; y++) px[y * width + x] = colour;
    }
  });
  ctx.putImageData(buffer, l.plotLeft, top0);
}

function drawTimeLabels(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const l = f.layout;
  const step = tickStep(f.secondsPerPixel);
  const end = f.startSeconds + l.plotWidth * f.secondsPerPixel;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'center';
  ctx.fillStyle = '#444444';
  for (let t = Math.ceil(f.startSeconds / step) * step; t <= end; t += step) {
    const x = Math.round(l.plotLeft + (t - f.startSeconds) / f.secondsPerPixel);
    ctx.fillText(f.formatTime(Number(t.toFixed(9)), step), x, l.plotTop + l.plotHeight + 5);
  }
  ctx.textAlign = 'start';
}

/**
 * Line mode: a line through the plot at each onset, the label along the top band. Strip mode: in the top band
 * only, a density strip (darker where more events fall in a pixel column) and a tick per event.
 */
function drawEventsOver(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const l = f.layout;
  const inPlot = f.events.events.filter((e) => e.x >= l.plotLeft && e.x < l.plotLeft + l.plotWidth);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  if (f.events.mode === 'lines') {
    for (const e of inPlot) {
      ctx.fillStyle = e.colour;
      ctx.fillRect(e.x, l.plotTop - 4, 1, l.plotHeight + 4);
    }
    const byX = new Map(inPlot.map((e) => [e.x, e.colour]));
    for (const placed of placeEventLabels(inPlot.map((e) => ({ x: e.x, label: e.label })), l.plotLeft + l.plotWidth, (text) => ctx.measureText(text).width)) {
      ctx.fillStyle = byX.get(placed.x - 3) ?? '#444444';
      ctx.fillText(placed.text, placed.x, 2);
    }
    return;
  }
  const band = l.plotTop - 2;
  const counts = new Map<number, number>();
  for (const e of f.events.events) {
    for (let x = Math.max(l.plotLeft, e.x); x <= Math.min(l.plotLeft + l.plotWidth - 1, Math.max(e.x, e.x1)); x++) counts.set(x, (counts.get(x) ?? 0) + 1);
  }
  const most = Math.max(1, ...counts.values());
  ctx.save();
  for (const [x, n] of counts) {
    ctx.globalAlpha = 0.15 + 0.6 * (n / most);
    ctx.fillStyle = '#444444';
    ctx.fillRect(x, 2, 1, band - 8);
  }
  ctx.globalAlpha = 1;
  for (const e of inPlot) {
    ctx.fillStyle = e.colour;
    ctx.fillRect(e.x, band - 5, 1, 5);
  }
  ctx.restore();
}

/** A bar one division (one row) tall at the bottom right of the label column, its value beneath. */
function drawScaleBar(ctx: CanvasRenderingContext2D, l: TraceLayout, text: string): void {
  const x = l.plotLeft - 10;
  const bottom = l.plotTop + l.plotHeight;
  ctx.fillStyle = '#222222';
  ctx.fillRect(x, Math.round(bottom - l.rowHeight), 2, Math.round(l.rowHeight));
  ctx.fillRect(x - 3, Math.round(bottom - l.rowHeight), 8, 1);
  ctx.fillRect(x - 3, Math.round(bottom) - 1, 8, 1);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'right';
  // Left of the first tick's label, which may sit on the plot's left edge.
  ctx.fillText(text, l.plotLeft - 24, bottom + 5);
  ctx.textAlign = 'start';
}
