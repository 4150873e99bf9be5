/**
 * Paints the annotations over the traces: a translucent band per annotation on its rows (the plot's height
 * when it is for all channels), edged with its colour and labelled at its top; events stay lines, so the two
 * never look alike. A draft is outlined dashed, the selected one solid.
 */
import type { TraceLayout } from '../../signals/trace-layout.js';
import type { AnnotationPlacement, DensityColumns, DrawnAnnotation } from './annotation-marks.js';

export function drawAnnotations(ctx: CanvasRenderingContext2D, l: TraceLayout, placement: AnnotationPlacement): void {
  if (placement.spans.length === 0 && !placement.density) return;
  ctx.save();
  ctx.beginPath();
  ctx.rect(l.plotLeft, l.plotTop, l.plotWidth, l.plotHeight);
  ctx.clip();
  if (placement.density) drawDensity(ctx, l, placement.density);
  // Bands and edges batched by colour (a few labels, hundreds of spans); drafts and the selected one on top.
  const entries = placement.spans.map((a) => ({ a, bands: bands(a, l) }));
  const byColour = new Map<string, typeof entries>();
  for (const entry of entries) {
    const group = byColour.get(entry.a.colour) ?? [];
    group.push(entry);
    byColour.set(entry.a.colour, group);
  }
  for (const [colour, group] of byColour) {
    ctx.fillStyle = colour;
    for (const [alpha, edges] of [[0.18, false], [0.85, true]] as const) {
      ctx.globalAlpha = alpha;
      ctx.beginPath();
      for (const { a, bands: spans } of group) {
        const width = Math.max(2, a.x1 - a.x0);
        for (const [top, height] of spans) {
          if (!edges) ctx.rect(a.x0, top, width, height);
          else {
            ctx.rect(a.x0, top, 1, height);
            ctx.rect(a.x0 + width - 1, top, 1, height);
          }
        }
      }
      ctx.fill();
    }
  }
  ctx.globalAlpha = 1;
  ctx.lineWidth = 2;
  for (const { a, bands: spans } of entries) {
    if (!a.selected && !a.draft) continue;
    const width = Math.max(2, a.x1 - a.x0);
    ctx.strokeStyle = a.colour;
    ctx.setLineDash(a.draft ? [5, 4] : []);
    for (const [top, height] of spans) ctx.strokeRect(a.x0 + 1, top + 1, width - 2, height - 2);
  }
  ctx.setLineDash([]);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'top';
  // Where the last label on each row ends, going by onset: a label that would overlap it is left out (the list names them all).
  const labelEnds = new Map<number, number>();
  for (const { a, bands: spans } of entries) drawLabel(ctx, l, a, spans[0], labelEnds);
  ctx.restore();
}

let density: { canvas: HTMLCanvasElement; image: ImageData } | undefined;

/**
 * The density: the covered columns written into a bitmap of one pixel per row (and one for the annotations of
 * all channels), stretched onto the plot with two `drawImage`s — a pass over rows × columns, whatever the
 * number of annotations.
 */
function drawDensity(ctx: CanvasRenderingContext2D, l: TraceLayout, d: DensityColumns): void {
  const rows = Math.max(1, Math.round(l.plotHeight / l.rowHeight));
  const width = l.plotWidth;
  if (!density || density.image.width !== width || density.image.height !== rows + 1) {
    const canvas = density?.canvas ?? document.createElement('canvas');
    canvas.width = width;
    canvas.height = rows + 1;
    density = { canvas, image: new ImageData(width, rows + 1) };
  }
  const pixels = new Uint32Array(density.image.data.buffer);
  pixels.fill(0);
  // #6a1b9a at 22 % opacity: ImageData holds straight RGBA bytes, read as ABGR words on little-endian machines.
  const colour = (56 << 24) | (0x9a << 16) | (0x1b << 8) | 0x6a;
  const columns = Math.min(width, d.width);
  for (let row = 0; row <= d.rows; row++) {
    // The annotations for all channels go to the bitmap's last row, whatever the page's row count.
    const to = (row === d.rows ? rows : row) * width;
    if (row < d.rows && row >= rows) continue;
    const from = row * d.width;
    for (let x = 0; x < columns; x++) if (d.covered[from + x] === 1) pixels[to + x] = colour;
  }
  density.canvas.getContext('2d')!.putImageData(density.image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(density.canvas, 0, 0, width, rows, l.plotLeft, l.plotTop, width, rows * l.rowHeight);
  ctx.drawImage(density.canvas, 0, rows, width, 1, l.plotLeft, l.plotTop, width, l.plotHeight);
  ctx.imageSmoothingEnabled = true;
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

/** The label (and author) at the top of an annotation's first band, when it fits and overlaps no other label. */
function drawLabel(ctx: CanvasRenderingContext2D, l: TraceLayout, a: DrawnAnnotation, first: [number, number] | undefined, labelEnds: Map<number, number>): void {
  const width = Math.max(2, a.x1 - a.x0);
  if (!first || width < 24) return;
  const text = a.author && !a.draft ? `${a.label} · ${a.author}` : a.label;
  const left = Math.max(a.x0, l.plotLeft) + 3;
  const room = Math.min(a.x0 + width, l.plotLeft + l.plotWidth) - left - 3;
  if (room < 16 || (!a.draft && !a.selected && left < (labelEnds.get(first[0]) ?? -Infinity))) return;
  const measured = Math.min(room, textWidth(ctx, text));
  labelEnds.set(first[0], left + measured + 6);
  ctx.fillStyle = '#ffffffd0';
  ctx.fillRect(left - 2, first[0] + 1, measured + 4, 13);
  ctx.fillStyle = a.colour;
  ctx.fillText(text, left, first[0] + 2, room);
}
