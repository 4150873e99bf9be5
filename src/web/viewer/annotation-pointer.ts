/**
 * Pure geometry of the annotation mode: a pointer's device pixel as a time (rounded to a sample) and a page
 * row, and which drawn annotation (and which of its edges) lies under it.
 */
import type { DrawnAnnotation } from './annotation-marks.js';
import type { ViewerState } from './viewer-state.js';

/** Pixels either side of an edge that grab it. */
export const edgeGrab = 4;

type Frame = Pick<ViewerState, 'start' | 'end' | 'rate' | 'nSamples' | 'plot' | 'channelCount'>;

/** The time at device column `x`, clamped to the plot and the recording, on a sample. */
export function secondsAt(s: Frame, x: number): number {
  const column = Math.min(s.plot.width, Math.max(0, x - s.plot.left));
  const sample = Math.round(s.start + (column * (s.end - s.start)) / s.plot.width);
  return Math.min(s.nSamples, Math.max(0, sample)) / s.rate;
}

/** The page row at device row `y`, clamped to the rows on the page. */
export function rowAt(s: Frame, y: number): number {
  return Math.min(Math.max(0, s.channelCount - 1), Math.max(0, Math.floor((y - s.plot.top) / s.plot.rowHeight)));
}

export interface AnnotationHit {
  annotation: DrawnAnnotation;
  /** `start`/`end`: within `edgeGrab` of that edge; `inside`: between them. */
  part: 'start' | 'end' | 'inside';
}

/** The topmost drawn annotation under (x, y) on a row it covers, edges before insides; undefined when none. */
export function hitAnnotation(drawn: readonly DrawnAnnotation[], s: Frame, x: number, y: number): AnnotationHit | undefined {
  if (y < s.plot.top || y >= s.plot.top + s.plot.height) return undefined;
  const row = rowAt(s, y);
  let inside: AnnotationHit | undefined;
  for (let i = drawn.length - 1; i >= 0; i--) {
    const a = drawn[i]!;
    if (a.draft || (a.channels !== null && !a.rows.includes(row))) continue;
    const x1 = Math.max(a.x1, a.x0 + 2);
    if (Math.abs(x - a.x1) <= edgeGrab && a.x1 - a.x0 > edgeGrab) return { annotation: a, part: 'end' };
    if (Math.abs(x - a.x0) <= edgeGrab) return { annotation: a, part: a.x1 - a.x0 > edgeGrab ? 'start' : 'inside' };
    if (!inside && x >= a.x0 && x <= x1) inside = { annotation: a, part: 'inside' };
  }
  return inside;
}
