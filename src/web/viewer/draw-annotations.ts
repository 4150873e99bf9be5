/**
 * Paints the annotations over the traces: a translucent band per annotation on its rows (the plot's height
 * when it is for all channels), edged with its colour and labelled at its top; events stay lines, so the two
 * never look alike. A draft is outlined dashed, the selected one solid.
 */
import type { TraceLayout } from '../../signals/trace-layout.js';
import type { AnnotationPlacement, DrawnAnnotation } from './annotation-marks.js';

export function drawAnnotations(ctx: CanvasRenderingContext2D, l: TraceLayout, placement: AnnotationPlacement): void {
  if (placement.spans.length === 0 && placement.runs.length === 0) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(l.plotLeft, l.plotTop, l.plotWidth, l.plotHeight);
  ctx.clip();
  if (placement.runs.length > 0) {
    ctx.globalAlpha = 0.22;
    ctx.fillStyle = '#6a1b9a';
    for (const run of placement.runs) {
      const top = run.row === null ? l.plotTop : l.plotTop + run.row * l.rowHeight;
      ctx.fillRect(run.x0, top, Math.max(1, run.x1 - run.x0), run.row === null ? l.plotHeight : l.rowHeight);
    }
  }
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  // Where the last label on each row ends: a label that would overlap it is left out (the list names them all).
  const labelEnds = new Map<number, number>();
  for (const a of placement.spans) drawSpan(ctx, l, a, labelEnds);
  ctx.restore();
}

/** Label widths by text: a frame of hundreds of spans repeats a few labels, and `measureText` is not free. */
const widths = new Map<string, number>();
function textWidth(ctx: CanvasRenderingContext2D, text: string): number {
  let width = widths.get(text);
  if (width === undefined) {
    if (widths.size > 2000) widths.clear();
    width = ctx.measureText(text).width;
    widths.set(text, width);
  }
  return width;
}

/** The rows an annotation covers as runs of adjacent rows, so a span over rows 2–9 is one band, not eight. */
function bands(a: DrawnAnnotation, l: TraceLayout): Array<[number, number]> {
  if (a.channels === null) return [[l.plotTop, l.plotHeight]];
  const rows = [...new Set(a.rows)].sort((x, y) => x - y);
  const out: Array<[number, number]> = [];
  for (let i = 0; i < rows.length; i++) {
    let j = i;
    while (j + 1 < rows.length && rows[j + 1] === rows[j]! + 1) j++;
    out.push([l.plotTop + rows[i]! * l.rowHeight, (j - i + 1) * l.rowHeight]);
    i = j;
  }
  return out;
}

function drawSpan(ctx: CanvasRenderingContext2D, l: TraceLayout, a: DrawnAnnotation, labelEnds: Map<number, number>): void {
  const x = a.x0;
  // An instant is a 2-pixel band, so it can be seen and picked.
  const width = Math.max(2, a.x1 - a.x0);
  const spans = bands(a, l);
  for (const [top, height] of spans) {
    ctx.globalAlpha = a.draft ? 0.12 : 0.18;
    ctx.fillStyle = a.colour;
    ctx.fillRect(x, top, width, height);
    ctx.globalAlpha = 0.85;
    ctx.fillRect(x, top, 1, height);
    ctx.fillRect(x + width - 1, top, 1, height);
    if (a.selected || a.draft) {
      ctx.strokeStyle = a.colour;
      ctx.lineWidth = 2;
      ctx.setLineDash(a.draft ? [5, 4] : []);
      ctx.strokeRect(x + 1, top + 1, width - 2, height - 2);
      ctx.setLineDash([]);
    }
  }
  const first = spans[0];
  if (!first || width < 24) return;
  const text = a.author && !a.draft ? `${a.label} · ${a.author}` : a.label;
  const left = Math.max(x, l.plotLeft) + 3;
  const room = Math.min(x + width, l.plotLeft + l.plotWidth) - left - 3;
  if (room < 16 || (!a.draft && !a.selected && left < (labelEnds.get(first[0]) ?? -Infinity))) return;
  const measured = Math.min(room, textWidth(ctx, text));
  labelEnds.set(first[0], left + measured + 6);
  ctx.globalAlpha = 1;
  ctx.fillStyle = '#ffffffd0';
  ctx.fillRect(left - 2, first[0] + 1, measured + 4, 13);
  ctx.fillStyle = a.colour;
  ctx.fillText(text, left, first[0] + 2, room);
}
