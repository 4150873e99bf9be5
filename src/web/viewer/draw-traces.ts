/** Paints one frame of the viewer onto a 2D canvas: grid and time axis, event markers, labels, traces. */
import type { ColumnEnvelope } from './column-envelope.js';
import type { ChannelMeta, EventMarker } from './recording-store.js';
import { columnPixels, formatSeconds, placeEventLabels, tickStep, type TraceLayout } from './trace-layout.js';

export const traceColor = '#1f4e9c';
export const eventColor = '#e07b00';

export interface FrameInput {
  layout: TraceLayout;
  /** Seconds at the plot's left edge and seconds a pixel spans. */
  startSeconds: number;
  secondsPerPixel: number;
  channels: ChannelMeta[];
  envelopes: ColumnEnvelope[];
  ranges: Array<[number, number]>;
  gain: number;
  events: EventMarker[];
}

export function drawFrame(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const { layout: l } = f;
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, l.width, l.height);
  drawTimeAxis(ctx, f);
  drawEvents(ctx, f);
  ctx.font = '12px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  f.channels.forEach((channel, row) => {
    const top = l.plotTop + row * l.rowHeight;
    const range = f.ranges[row]!;
    ctx.fillStyle = '#222222';
    ctx.fillText(channel.label, 6, top + l.rowHeight / 2 - (l.rowHeight > 28 ? 7 : 0), l.plotLeft - 12);
    if (l.rowHeight > 28) {
      ctx.fillStyle = '#666666';
      const half = (range[1] - range[0]) / 2 / f.gain;
      ctx.fillText(`±${formatAmplitude(half)} ${channel.unit}`, 6, top + l.rowHeight / 2 + 8, l.plotLeft - 12);
    }
    drawTrace(ctx, l, top, f.envelopes[row]!, range, f.gain);
  });
}

function drawTrace(ctx: CanvasRenderingContext2D, l: TraceLayout, top: number, envelope: ColumnEnvelope, range: [number, number], gain: number): void {
  ctx.save();
  ctx.beginPath();
  ctx.rect(l.plotLeft, Math.floor(top), l.plotWidth, Math.ceil(l.rowHeight));
  ctx.clip();
  ctx.fillStyle = traceColor;
  // One path of pixel-aligned rectangles filled once: far cheaper than a fillRect per column.
  ctx.beginPath();
  for (let x = 0; x < envelope.lo.length; x++) {
    const lo = envelope.lo[x]!;
    if (Number.isNaN(lo)) continue;
    const [y0, y1] = columnPixels(lo, envelope.hi[x]!, range, top, l.rowHeight, gain);
    ctx.rect(l.plotLeft + x, y0, 1, y1 - y0 + 1);
  }
  ctx.fill();
  ctx.restore();
}

function drawTimeAxis(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const l = f.layout;
  const step = tickStep(f.secondsPerPixel);
  const end = f.startSeconds + l.plotWidth * f.secondsPerPixel;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  ctx.textAlign = 'center';
  for (let t = Math.ceil(f.startSeconds / step) * step; t <= end; t += step) {
    const x = Math.round(l.plotLeft + (t - f.startSeconds) / f.secondsPerPixel);
    ctx.fillStyle = '#e4e4e4';
    ctx.fillRect(x, l.plotTop, 1, l.plotHeight);
    ctx.fillStyle = '#444444';
    ctx.fillText(formatSeconds(Number(t.toFixed(9)), step), x, l.plotTop + l.plotHeight + 5);
  }
  ctx.textAlign = 'start';
}

function drawEvents(ctx: CanvasRenderingContext2D, f: FrameInput): void {
  const l = f.layout;
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  const onScreen: Array<{ x: number; label: string }> = [];
  for (const event of f.events) {
    const x = Math.round(l.plotLeft + (event.onset - f.startSeconds) / f.secondsPerPixel);
    if (x >= l.plotLeft && x < l.plotLeft + l.plotWidth) onScreen.push({ x, label: event.label });
  }
  ctx.fillStyle = eventColor;
  for (const { x } of onScreen) ctx.fillRect(x, l.plotTop - 4, 1, l.plotHeight + 4);
  for (const placed of placeEventLabels(onScreen, l.plotLeft + l.plotWidth, (text) => ctx.measureText(text).width)) {
    ctx.fillText(placed.text, placed.x, 2);
  }
}

function formatAmplitude(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 1) return value.toFixed(1);
  return value.toPrecision(2);
}
