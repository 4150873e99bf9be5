/**
 * Paints the annotations over the traces: a translucent band per annotation on its rows (the plot's height
 * when it is for all channels), edged with its colour and labelled at its top; events stay lines, so the two
 * never look alike. A draft is outlined dashed, the selected one solid. Bands and edges are one bitmap of a
 * pixel per row (`span-bitmap.ts`), labels bitmaps kept by text: a frame's cost after its code has run
 * (rasterizing the canvas) does not grow with the spans.
 */
import type { TraceLayout } from '../../signals/trace-layout.js';
import type { AnnotationPlacement, DensityColumns, DrawnAnnotation } from './annotation-marks.js';
import { spanBitmap } from './span-bitmap.js';

export function drawAnnotations(ctx: CanvasRenderingContext2D, l: TraceLayout, placement: AnnotationPlacement): void {
  if (placement.spans.length === 0 && !placement.density) return;
  if (placement.density) drawDensity(ctx, l, placement.density);
  if (placement.spans.length > 0) drawSpans(ctx, l, placement.spans);
  const outlined = placement.spans.filter((a) => a.selected || a.draft);
  if (outlined.length > 0) {
    // The outline of a span running off the plot stops at its edge: clipped, for these one or two only.
    ctx.save();
    ctx.beginPath();
    ctx.rect(l.plotLeft, l.plotTop, l.plotWidth, l.plotHeight);
    ctx.clip();
    ctx.lineWidth = 2;
    for (const a of outlined) {
      const width = spanWidth(a);
      ctx.strokeStyle = a.colour;
      ctx.setLineDash(a.draft ? [5, 4] : []);
      for (const [top, height] of bands(a, l)) ctx.strokeRect(a.x0 + 1, top + 1, width - 2, height - 2);
    }
    ctx.restore();
  }
  // Where the last label on each row ends, going by onset: a label that would overlap it is left out (the list names them all).
  const labelEnds = new Map<number, number>();
  for (const a of placement.spans) drawLabel(ctx, l, a, labelEnds);
}

/** A span is drawn at least 2 px wide, so an instant shows. */
const spanWidth = (a: DrawnAnnotation) => Math.max(2, a.x1 - a.x0);

/** A canvas of one pixel per page row and plot column, its image and the image's words, reused frame to frame (the spans, and the density). */
interface RowBitmap {
  canvas: HTMLCanvasElement;
  image: ImageData;
  words: Int32Array;
}

function rowBitmap(kept: RowBitmap | undefined, width: number, height: number): RowBitmap {
  if (kept && kept.image.width === width && kept.image.height === height) return kept;
  const canvas = kept?.canvas ?? document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const image = new ImageData(width, height);
  return { canvas, image, words: new Int32Array(image.data.buffer) };
}

let spans: RowBitmap | undefined;

/** The bands and edges (`span-bitmap.ts`): one bitmap of a pixel per row, stretched onto the plot with one `drawImage`. */
function drawSpans(ctx: CanvasRenderingContext2D, l: TraceLayout, drawn: readonly DrawnAnnotation[]): void {
  const rows = Math.max(1, Math.round(l.plotHeight / l.rowHeight));
  spans = rowBitmap(spans, l.plotWidth, rows);
  spanBitmap(drawn, l.plotLeft, l.plotWidth, rows, spans.words);
  spans.canvas.getContext('2d')!.putImageData(spans.image, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(spans.canvas, 0, 0, l.plotWidth, rows, l.plotLeft, l.plotTop, l.plotWidth, rows * l.rowHeight);
  ctx.imageSmoothingEnabled = true;
}

let density: RowBitmap | undefined;

/**
 * The density: the covered columns written into a bitmap of one pixel per row (and one for the annotations of
 * all channels), stretched onto the plot with two `drawImage`s — a pass over rows × columns, whatever the
 * number of annotations.
 */
function drawDensity(ctx: CanvasRenderingContext2D, l: TraceLayout, d: DensityColumns): void {
  const rows = Math.max(1, Math.round(l.plotHeight / l.rowHeight));
  const width = l.plotWidth;
  density = rowBitmap(density, width, rows + 1);
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

/**
 * Labels as small bitmaps, by text and colour, drawn once and copied with `drawImage` each frame: a frame of a
 * few hundred spans repeats a few labels, and text costs more to draw than its pixels do to copy (the row
 * labels are kept the same way, `draw-traces.ts`). Each holds the label's white box and its text.
 */
const labelImages = new Map<string, Map<string, { canvas: HTMLCanvasElement; textWidth: number }>>();
let labelImageCount = 0;
const labelFont = '11px system-ui, sans-serif';
/** The white box under a label, and the bitmap (the box and the descenders below it). */
const labelBoxHeight = 13;
const labelImageHeight = 15;

function labelImage(text: string, colour: string): { canvas: HTMLCanvasElement; textWidth: number } {
  let ofColour = labelImages.get(colour);
  let image = ofColour?.get(text);
  if (image) return image;
  if (labelImageCount > 500) {
    labelImages.clear();
    labelImageCount = 0;
    ofColour = undefined;
  }
  if (!ofColour) labelImages.set(colour, (ofColour = new Map()));
  const canvas = document.createElement('canvas');
  const c = canvas.getContext('2d')!;
  c.font = labelFont;
  const textWidth = c.measureText(text).width;
  canvas.width = Math.ceil(textWidth) + 4;
  canvas.height = labelImageHeight;
  c.fillStyle = '#ffffffd0';
  c.fillRect(0, 0, canvas.width, labelBoxHeight);
  c.font = labelFont;
  c.textBaseline = 'top';
  c.fillStyle = colour;
  c.fillText(text, 2, 1);
  image = { canvas, textWidth };
  ofColour.set(text, image);
  labelImageCount++;
  return image;
}

/**
 * The rows an annotation covers as runs of adjacent rows (first row, count), so a span over rows 2–9 is one band,
 * not eight; by rows array, which the placement keeps per annotation while the page's rows stay.
 */
const runsOfRows = new WeakMap<readonly number[], Array<[number, number]>>();
function rowRuns(rows: readonly number[]): Array<[number, number]> {
  let runs = runsOfRows.get(rows);
  if (runs) return runs;
  const sorted = [...new Set(rows)].sort((x, y) => x - y);
  runs = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    runs.push([sorted[i]!, j - i + 1]);
    i = j;
  }
  runsOfRows.set(rows, runs);
  return runs;
}

/** The pixel bands [top, height] an annotation is drawn over: the plot's height when it is for all channels. */
function bands(a: DrawnAnnotation, l: TraceLayout): Array<[number, number]> {
  if (a.channels === null) return [[l.plotTop, l.plotHeight]];
  return rowRuns(a.rows).map(([first, count]) => [l.plotTop + first * l.rowHeight, count * l.rowHeight]);
}

/**
 * The label (and author) at the top of an annotation's first band, when it fits and overlaps no other label;
 * cut at the span's end (or the plot's) when longer.
 */
function drawLabel(ctx: CanvasRenderingContext2D, l: TraceLayout, a: DrawnAnnotation, labelEnds: Map<number, number>): void {
  const width = spanWidth(a);
  const firstRow = a.channels === null ? 0 : rowRuns(a.rows)[0]?.[0];
  if (firstRow === undefined || width < 24) return;
  const top = Math.round(l.plotTop + firstRow * l.rowHeight);
  const text = a.author && !a.draft ? `${a.label} · ${a.author}` : a.label;
  const left = Math.max(a.x0, l.plotLeft) + 3;
  const room = Math.min(a.x0 + width, l.plotLeft + l.plotWidth) - left - 3;
  if (room < 16 || (!a.draft && !a.selected && left < (labelEnds.get(top) ?? -Infinity))) return;
  const image = labelImage(text, a.colour);
  const measured = Math.min(room, image.textWidth);
  labelEnds.set(top, left + measured + 6);
  // On whole pixels: a bitmap copied at a fraction of one would be resampled, blurred.
  const shown = Math.min(image.canvas.width, Math.ceil(measured) + 4);
  ctx.drawImage(image.canvas, 0, 0, shown, labelImageHeight, left - 2, top + 1, shown, labelImageHeight);
}
