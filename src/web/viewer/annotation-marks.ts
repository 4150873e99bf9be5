/**
 * Where a frame draws the annotations: each one in the window as a span over its channels' rows (all rows when
 * it is for all channels), with its pixel columns; past `maxSpans` in the window, the rows' covered columns
 * only (a density, no labels), read from the index's sorted onsets and ends per channel: a frame costs
 * O(rows × columns) whether 2,000 or 100,000 annotations are in view.
 * Pure: the frame's compute step calls it, painting reads its answer.
 */
import { ALL_CHANNELS, type AnnotationIndex, type ViewerAnnotation } from './annotation-index.js';

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
  rows: readonly number[];
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
  /** Mode `density`: the covered pixel columns of each page row, and of the annotations for all channels. */
  density?: DensityColumns | undefined;
}

/**
 * Which pixel columns of the plot the annotations cover: `covered[r × width + x]` is 1 where row `r`'s
 * channel has an annotation in column `x` (from the plot's left edge); row `rows` (the last) holds those for
 * all channels. One buffer reused frame to frame (painting reads it before the next frame computes): a
 * zoomed-out frame allocates nothing per annotation or per run.
 */
export interface DensityColumns {
  rows: number;
  width: number;
  covered: Uint8Array;
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

/** Label → colour, as `annotationColour` says (a frame colours hundreds of spans with a few labels). */
const colours = new Map<string, string>();
function colourOf(label: string): string {
  let colour = colours.get(label);
  if (colour === undefined) {
    if (colours.size > 2000) colours.clear();
    colour = annotationColour(label);
    colours.set(label, colour);
  }
  return colour;
}

/**
 * The page's rows each recorded channel is drawn on, and each annotation's rows, kept while the page shows the
 * same rows: a pan moves the spans' columns only. By annotation object (an edit or a poll's change makes a new
 * one), so nothing stale is kept and nothing needs clearing but on a change of rows.
 */
interface PageRows {
  key: string;
  rowOf: Map<string, number[]>;
  everyRow: number[];
  byAnnotation: WeakMap<ViewerAnnotation, number[]>;
}
let pageRows: PageRows | undefined;

function rowsOfPage(rowChannels: readonly string[]): PageRows {
  const key = rowChannels.join('\n');
  if (pageRows?.key === key) return pageRows;
  const rowOf = new Map<string, number[]>();
  rowChannels.forEach((label, i) => {
    const rows = rowOf.get(label);
    if (rows) rows.push(i);
    else rowOf.set(label, [i]);
  });
  pageRows = { key, rowOf, everyRow: rowChannels.map((_, i) => i), byAnnotation: new WeakMap() };
  return pageRows;
}

export function placeAnnotations(index: AnnotationIndex | undefined, view: AnnotationView, focus: { draft?: AnnotationDraft | undefined; selected?: string | undefined } = {}): AnnotationPlacement {
  const from = view.startSeconds;
  const to = from + view.plotWidth * view.secondsPerPixel;
  const total = index?.size ?? 0;
  // How many are in view is two binary searches; only a window of at most `maxSpans` is walked.
  const inView = index?.count(from, to) ?? 0;
  const page = rowsOfPage(view.rowChannels);
  const rowsOf = (channels: string[] | null) => (channels === null ? page.everyRow : channels.flatMap((c) => page.rowOf.get(c) ?? []));
  const savedRows = (a: ViewerAnnotation) => {
    let rows = page.byAnnotation.get(a);
    if (!rows) page.byAnnotation.set(a, (rows = rowsOf(a.channels)));
    return rows;
  };
  const xOf = (seconds: number) => Math.round(view.plotLeft + (seconds - from) / view.secondsPerPixel);
  const place = (a: ViewerAnnotation | AnnotationDraft, author: string | null, rows: number[]): DrawnAnnotation => ({
    id: a.id ?? '',
    onset: a.onset,
    duration: a.duration,
    channels: a.channels,
    label: a.label,
    author,
    x0: xOf(a.onset),
    x1: xOf(a.onset + a.duration),
    rows,
    colour: colourOf(a.label),
  });
  const draft = focus.draft && { ...place(focus.draft, null, rowsOf(focus.draft.channels)), draft: true, selected: true };
  if (inView > maxSpans) {
    return { mode: 'density', total, inView, spans: draft ? [draft] : [], density: densityColumns(index!, view, page.rowOf) };
  }
  const spans: DrawnAnnotation[] = [];
  for (const a of index?.overlapping(from, to) ?? []) {
    // The one being edited is drawn as its draft (where the user is dragging it), not where it was saved.
    if (draft && a.id === focus.draft?.id) continue;
    const drawn = place(a, a.author, savedRows(a));
    if (a.id === focus.selected) drawn.selected = true;
    spans.push(drawn);
  }
  if (draft) spans.push(draft);
  return { mode: 'spans', total, inView, spans };
}

let buffer = new Uint8Array(0);

/** The covered columns of each row: the index's coverage of each channel on the page, once per channel. */
function densityColumns(index: AnnotationIndex, view: AnnotationView, rowOf: Map<string, number[]>): DensityColumns {
  const width = view.plotWidth;
  const rows = view.rowChannels.length;
  if (buffer.length < (rows + 1) * width) buffer = new Uint8Array((rows + 1) * width);
  const covered = buffer.subarray(0, (rows + 1) * width);
  index.coverage(ALL_CHANNELS, view.startSeconds, view.secondsPerPixel, width, covered, rows * width);
  for (const [label, [first, ...others]] of rowOf) {
    if (label === ALL_CHANNELS) {
      for (const row of [first!, ...others]) covered.fill(0, row * width, (row + 1) * width);
      continue;
    }
    index.coverage(label, view.startSeconds, view.secondsPerPixel, width, covered, first! * width);
    for (const row of others) covered.copyWithin(row * width, first! * width, (first! + 1) * width);
  }
  return { rows, width, covered };
}
