/** The visible window in level-0 samples, with the clamping rules every input action shares. Pure. */

export interface ViewWindow {
  /** First level-0 sample at the left edge. */
  start: number;
  /** Samples across the plot. */
  span: number;
}

/** Fewest samples across the plot: a handful, so single samples are seen as steps. */
export const minSpan = 8;

export function clampWindow(w: ViewWindow, nSamples: number): ViewWindow {
  const span = Math.min(Math.max(w.span, minSpan), Math.max(nSamples, minSpan));
  const start = Math.min(Math.max(w.start, 0), Math.max(0, nSamples - span));
  return { start, span };
}

/** Zooms by `factor` (< 1 zooms in) keeping the sample under `anchor` (0..1 across the plot) in place. */
export function zoomAround(w: ViewWindow, factor: number, anchor: number, nSamples: number): ViewWindow {
  const pivot = w.start + anchor * w.span;
  const span = Math.min(Math.max(w.span * factor, minSpan), Math.max(nSamples, minSpan));
  return clampWindow({ start: pivot - anchor * span, span }, nSamples);
}

export function scrub(w: ViewWindow, samples: number, nSamples: number): ViewWindow {
  return clampWindow({ start: w.start + samples, span: w.span }, nSamples);
}
