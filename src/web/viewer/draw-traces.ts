/** Paints one frame of the viewer onto a 2D canvas: grid and time axis, events, labels, traces, scale bar. */
import { paintPlotPixels, plotBufferRows, samePlotPixels, type FrameInput } from '../../signals/plot-pixels.js';
import { placeEventLabels, tickStep, type TraceLayout } from '../../signals/trace-layout.js';

export type { DrawnRow, FrameInput } from '../../signals/plot-pixels.js';

/** A time label of the axis as drawn: its text and the pixel columns [left, right] it covers. */
export interface AxisLabel {
  text: string;
  left: number;
  right: number;
}

/**
 * Paints the frame; returns where the axis' time labels landed (each wholly inside the canvas) and whether the
 * plot's pixels were the ones painted ahead (`preparePlotPixels`) rather than painted now.
 */
export function drawFrame(ctx: CanvasRenderingContext2D, f: FrameInput): { axis: AxisLabel[]; plotPrepared: boolean } {
  const { layout: l } = f;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, l.width, l.height);
  const plotPrepared = drawPlotPixels(ctx, f);
  const axis = drawTimeLabels(ctx, f);
  drawRowLabels(ctx, f);
  drawEventsOver(ctx, f);
  if (f.scaleBar !== undefined && f.rows.length > 0) drawScaleBar(ctx, l, f.scaleBar);
  return { axis, plotPrepared };
}

let labels: { key: string; canvas: HTMLCanvasElement } | undefined;

/**
 * The label column: 64 rows of text cost more than the traces' pixels, and a pan does not change them, so
 * they are drawn once into a canvas of their own (kept while labels, details, colours and layout stay the
 * same) and copied in one `drawImage` each frame.
 */
function drawRowLabels(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const l = f.layout;
  const width = Math.max(1, Math.floor(l.plotLeft));
  const height = Math.max(1, Math.ceil(l.plotTop + l.plotHeight));
  const key = `${width}|${height}|${l.plotTop}|${l.rowHeight}|${f.rows.map((r) => `${r.label}\u0000${r.detail}\u0000${r.colour}`).join('\u0001')}`;
  if (labels?.key !== key) {
    const canvas = labels?.canvas ?? document.createElement('canvas');
    canvas.width = width;
    canvas.height = height;
    const c = canvas.getContext('2d')!;
    // The same white under the text as on the frame, so the text is antialiased exactly as if drawn there.
    c.fillStyle = '#ffffff';
    c.fillRect(0, 0, width, height);
    c.font = '12px system-ui, sans-serif';
    c.textBaseline = 'middle';
    const labelWidth = l.plotLeft - 24;
    f.rows.forEach((row, i) => {
      const top = l.plotTop + i * l.rowHeight;
      const twoLines = l.rowHeight > 28 && row.detail !== '';
      c.fillStyle = row.colour;
      c.fillText(row.label, 6, top + l.rowHeight / 2 - (twoLines ? 7 : 0), labelWidth);
      if (twoLines) {
        c.fillStyle = '#666666';
        c.fillText(row.detail, 6, top + l.rowHeight / 2 + 8, labelWidth);
      }
    });
    labels = { key, canvas };
  }
  ctx.drawImage(labels.canvas, 0, 0);
}

let buffer: ImageData | undefined;
/** The pixels painted ahead for a frame expected next, and a buffer to paint the next ones into. */
let prepared: { input: FrameInput; image: ImageData } | undefined;
let spare: ImageData | undefined;

/**
 * The plot's pixels in one buffer (`signals/plot-pixels.ts`), written with one `putImageData`: the buffer
 * painted ahead when it was painted for exactly this frame's input, else painted now. True for the former.
 */
function drawPlotPixels(ctx: CanvasRenderingContext2D, f: FrameInput): boolean {
  const l = f.layout;
  const { top0, height } = plotBufferRows(l);
  // A frame that is not the one expected (a redraw in place, another pan) leaves the pixels painted ahead waiting.
  const ahead = prepared && samePlotPixels(prepared.input, f) ? prepared.image : undefined;
  if (ahead) {
    prepared = undefined;
    spare = buffer;
    buffer = ahead;
  } else {
    if (!buffer || buffer.width !== l.plotWidth || buffer.height !== height) buffer = ctx.createImageData(l.plotWidth, height);
    paintPlotPixels(new Uint32Array(buffer.data.buffer), f);
  }
  ctx.putImageData(buffer, l.plotLeft, top0);
  return ahead !== undefined;
}

/**
 * Paints the plot's pixels of a frame expected next (the viewer's guess at the next pan), off screen, while
 * the viewer is idle: a frame whose input turns out the same (`samePlotPixels`) puts them on the canvas instead
 * of painting. `f` must not change afterwards (its envelopes are the viewer's arrays for frames ahead).
 */
export function preparePlotPixels(f: FrameInput): void {
  const l = f.layout;
  const { height } = plotBufferRows(l);
  const reuse = spare ?? prepared?.image;
  const image = reuse && reuse.width === l.plotWidth && reuse.height === height ? reuse : new ImageData(l.plotWidth, height);
  spare = undefined;
  paintPlotPixels(new Uint32Array(image.data.buffer), f);
  prepared = { input: f, image };
}

/**
 * Time labels centred under their ticks; a label that would run past the canvas' right edge (the last tick
 * sits a few pixels from it) is moved left to end at the edge, so it is read whole.
 */
function drawTimeLabels(ctx: CanvasRenderingContext2D, f: FrameInput): AxisLabel[] {
  const l = f.layout;
  const step = tickStep(f.secondsPerPixel);
  const end = f.startSeconds + l.plotWidth * f.secondsPerPixel;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'left';
  ctx.fillStyle = '#444444';
  const placed: AxisLabel[] = [];
  for (let t = Math.ceil(f.startSeconds / step) * step; t <= end; t += step) {
    const x = Math.round(l.plotLeft + (t - f.startSeconds) / f.secondsPerPixel);
    const text = f.formatTime(Number(t.toFixed(9)), step);
    const width = ctx.measureText(text).width;
    const left = Math.max(0, Math.min(x - width / 2, l.width - 1 - width));
    ctx.fillText(text, left, l.plotTop + l.plotHeight + 5);
    placed.push({ text, left, right: left + width });
  }
  ctx.textAlign = 'start';
  return placed;
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
