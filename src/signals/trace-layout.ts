/** Where things sit on the canvas, and how a physical value maps to a pixel row. Pure. */

export interface TraceLayout {
  width: number;
  height: number;
  plotLeft: number;
  plotTop: number;
  plotWidth: number;
  plotHeight: number;
  rowHeight: number;
  rows: number;
}

export const labelGutter = 120;
export const eventBand = 18;
export const axisBand = 24;

export function traceLayout(width: number, height: number, rows: number): TraceLayout {
  const plotLeft = labelGutter;
  const plotTop = eventBand;
  const plotWidth = Math.max(1, width - plotLeft - 8);
  const plotHeight = Math.max(1, height - plotTop - axisBand);
  return { width, height, plotLeft, plotTop, plotWidth, plotHeight, rowHeight: plotHeight / Math.max(1, rows), rows };
}

/**
 * Autoscale: the channel's [min, max] on screen fills its row less a 10 % margin each side, times `gain`.
 * A flat channel is drawn at the row's middle.
 */
export function valueToY(value: number, range: readonly [number, number], rowTop: number, rowHeight: number, gain: number): number {
  const mid = (range[0] + range[1]) / 2;
  const half = (range[1] - range[0]) / 2 || 1;
  const reach = rowHeight / 2 - rowHeight * 0.1;
  return rowTop + rowHeight / 2 - ((value - mid) / half) * reach * gain;
}

/** The pixel rows [top, bottom] (inclusive) a column with physical range [lo, hi] is filled over. */
export function columnPixels(lo: number, hi: number, range: readonly [number, number], rowTop: number, rowHeight: number, gain: number): [number, number] {
  const top = Math.round(valueToY(hi, range, rowTop, rowHeight, gain));
  const bottom = Math.round(valueToY(lo, range, rowTop, rowHeight, gain));
  return [top, Math.max(top, bottom)];
}

/** How a row maps physical values to pixels: `baseline` sits at the row's middle. */
export interface RowScale {
  baseline: number;
  pixelsPerUnit: number;
}

/** Autoscale as a RowScale: the row's [min, max] on screen fills 80 % of the row, times `gain`. */
export function autoRowScale(range: readonly [number, number], rowHeight: number, gain: number): RowScale {
  const half = (range[1] - range[0]) / 2 || 1;
  return { baseline: (range[0] + range[1]) / 2, pixelsPerUnit: ((rowHeight * 0.4) / half) * gain };
}

export function rowY(value: number, s: RowScale, rowTop: number, rowHeight: number): number {
  return rowTop + rowHeight / 2 - (value - s.baseline) * s.pixelsPerUnit;
}

/** A tick step of 1, 2 or 5 × 10^k seconds that leaves at least `minPixels` between ticks. */
export function tickStep(secondsPerPixel: number, minPixels = 90): number {
  const raw = secondsPerPixel * minPixels;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

export function formatSeconds(t: number, step: number): string {
  const digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step))));
  if (t >= 3600 && step >= 1) return `${Math.floor(t / 3600)}:${String(Math.floor((t % 3600) / 60)).padStart(2, '0')}:${String(Math.floor(t % 60)).padStart(2, '0')}`;
  if (t >= 60 && step >= 1) return `${Math.floor(t / 60)}:${String(Math.floor(t % 60)).padStart(2, '0')}`;
  return `${t.toFixed(digits)} s`;
}

/**
 * Where event labels go: each gets the room up to the next marker (at most 160 px, not past `plotRight`) and is
 * shortened with an ellipsis to fit; one that would start on the label before it, or has less than 24 px, is
 * left out (its marker line stays), so that close events do not print over each other.
 */
export function placeEventLabels(markers: Array<{ x: number; label: string }>, plotRight: number, measure: (text: string) => number): Array<{ x: number; text: string }> {
  const sorted = [...markers].sort((a, b) => a.x - b.x);
  const placed: Array<{ x: number; text: string }> = [];
  let labelsEnd = -Infinity;
  sorted.forEach(({ x, label }, i) => {
    const nextX = sorted[i + 1]?.x ?? Infinity;
    const room = Math.min(160, nextX - x - 6, plotRight - x - 3);
    if (x + 3 < labelsEnd || room < 24) return;
    let text = label;
    if (measure(text) > room) {
      let n = label.length;
      while (n > 1 && measure(`${label.slice(0, n)}…`) > room) n--;
      text = `${label.slice(0, n)}…`;
    }
    placed.push({ x: x + 3, text });
    labelsEnd = x + 3 + measure(text) + 4;
  });
  return placed;
}
