/**
 * Where a frame draws the annotations: each one in the window as a span over its channels' rows (all rows when
 * it is for all channels), with its pixel columns; past `maxSpans` in the window, the rows' covered columns
 * only (a density, no labels), so a zoomed-out hour of 100,000 annotations costs one pass and a few rectangles.
 * Pure: the frame's compute step calls it, painting reads its answer.
 */
import type { AnnotationIndex, ViewerAnnotation } from './annotation-index.js';

/** One annotation as drawn: what it is, where it landed and on which rows of the page. */
export interface DrawnAnnotation {
  id: string;
  onset: number;
  duration: number;
  channels: string[] | null;
  label: string;
  author: string | null;
  /** Device-pixel columns of its start and end from the canvas' left edge (not clipped to the plot). */
  x0: number;
  x1: number;
  /** The page's rows it is drawn on (every row when `channels` is null). */
  rows: number[];
  colour: string;
  /** Being drawn or edited and not saved yet. */
  draft?: boolean;
  /** The one the form is open on. */
  selected?: boolean;
}

export interface AnnotationPlacement {
  /** `spans`: each annotation drawn with its label; `density`: too many in the window, covered columns only. */
  mode: 'spans' | 'density';
  /** Annotations of the recording, and those with a part in the window. */
  total: number;
  inView: number;
  /** The spans drawn (mode `spans`), by onset; the draft, if any, last. */
  spans: DrawnAnnotation[];
  /** Mode `density`: runs of covered columns per page row (`row` null: an annotation for all channels). */
  runs: Array<{ row: number | null; x0: number; x1: number }>;
}

export interface AnnotationView {
  startSeconds: number;
  secondsPerPixel: number;
  plotLeft: number;
  plotWidth: number;
  /** The recorded channel each row of the page shows (its montage row's first channel). */
  rowChannels: readonly string[];
}

/** Past this many annotations in the window, the frame draws their density. */
export const maxSpans = 1500;

export const annotationPalette = ['#8e24aa', '#2e7d32', '#1565c0', '#c62828', '#ef6c00', '#00838f', '#6d4c41', '#9e9d24'];

/** A label's colour: the same for everyone and every session (a hash, not an order of appearance). */
export function annotationColour(label: string): string {
  let h = 2166136261;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 16777619);
  return annotationPalette[(h >>> 0) % annotationPalette.length]!;
}

/** An annotation not saved yet (a span being dragged, or one being edited), drawn over the others. */
export interface AnnotationDraft {
  id?: string | undefined;
  onset: number;
  duration: number;
  channels: string[] | null;
  label: string;
}

export function placeAnnotations(index: AnnotationIndex | undefined, view: AnnotationView, focus: { draft?: AnnotationDraft | undefined; selected?: string | undefined } = {}): AnnotationPlacement {
  const from = view.startSeconds;
  const to = from + view.plotWidth * view.secondsPerPixel;
  const total = index?.size ?? 0;
  // One scan while they are few enough to draw as spans; the whole window's only past that.
  const first = index?.overlapping(from, to, maxSpans + 1) ?? [];
  const inWindow = first.length > maxSpans ? index!.overlapping(from, to) : first;
  const inView = inWindow.length;
  const rowOf = new Map<string, number[]>();
  view.rowChannels.forEach((label, i) => rowOf.set(label, [...(rowOf.get(label) ?? []), i]));
  const everyRow = view.rowChannels.map((_, i) => i);
  const rowsOf = (channels: string[] | null) => (channels === null ? everyRow : channels.flatMap((c) => rowOf.get(c) ?? []));
  const xOf = (seconds: number) => Math.round(view.plotLeft + (seconds - from) / view.secondsPerPixel);
  const place = (a: ViewerAnnotation | AnnotationDraft, author: string | null): DrawnAnnotation => ({
    id: a.id ?? '',
    onset: a.onset,
    duration: a.duration,
    channels: a.channels,
    label: a.label,
    author,
    x0: xOf(a.onset),
    x1: xOf(a.onset + a.duration),
    rows: rowsOf(a.channels),
    colour: annotationColour(a.label),
  });
  const draft = focus.draft && { ...place(focus.draft, null), draft: true, selected: true };
  if (inView > maxSpans) {
    return { mode: 'density', total, inView, spans: draft ? [draft] : [], runs: densityRuns(inWindow, view, rowOf, xOf) };
  }
  const spans: DrawnAnnotation[] = [];
  for (const a of inWindow) {
    // The one being edited is drawn as its draft (where the user is dragging it), not where it was saved.
    if (draft && a.id === focus.draft?.id) continue;
    const drawn = place(a, a.author);
    if (a.id === focus.selected) drawn.selected = true;
    spans.push(drawn);
  }
  if (draft) spans.push(draft);
  return { mode: 'spans', total, inView, spans, runs: [] };
}

/** Runs of covered pixel columns for each row, and for the annotations of all channels, from difference arrays. */
function densityRuns(annotations: ViewerAnnotation[], view: AnnotationView, rowOf: Map<string, number[]>, xOf: (s: number) => number): AnnotationPlacement['runs'] {
  const width = view.plotWidth;
  const rowCount = view.rowChannels.length;
  // Row `rowCount` holds the annotations for all channels.
  const diff = new Int32Array((rowCount + 1) * (width + 1));
  for (const a of annotations) {
    const x0 = Math.max(0, xOf(a.onset) - view.plotLeft);
    const x1 = Math.min(width - 1, Math.max(x0, xOf(a.onset + a.duration) - view.plotLeft));
    if (x0 > width - 1) continue;
    if (a.channels === null) {
      diff[rowCount * (width + 1) + x0] += 1;
      diff[rowCount * (width + 1) + x1 + 1] -= 1;
      continue;
    }
    for (const c of a.channels) {
      const rows = rowOf.get(c);
      if (!rows) continue;
      for (const row of rows) {
        diff[row * (width + 1) + x0] += 1;
        diff[row * (width + 1) + x1 + 1] -= 1;
      }
    }
  }
  const runs: AnnotationPlacement['runs'] = [];
  for (let row = 0; row <= rowCount; row++) {
    let depth = 0;
    let start = -1;
    for (let x = 0; x <= width; x++) {
      depth += diff[row * (width + 1) + x]!;
      if (depth > 0 && start < 0) start = x;
      if ((depth <= 0 || x === width) && start >= 0) {
        runs.push({ row: row === rowCount ? null : row, x0: view.plotLeft + start, x1: view.plotLeft + x });
        start = -1;
      }
    }
  }
  return runs;
}
