/**
 * The cursor readout (time in the user's format and the value of the row under the pointer, from the last
 * frame's drawn values) and the ruler (Shift+drag: the interval and the amplitude between two points, in
 * the unit of the row it starts on), drawn on a transparent canvas over the traces.
 */
import type { SignalViewer, ViewerState } from './signal-viewer.js';

export interface PointerValue {
  seconds: number;
  row: number;
  label: string;
  unit: string;
  /** The sample (level 0) or the column's [min, max] (view levels); undefined off the data. */
  value?: number | [number, number] | undefined;
}

/** What lies under device pixel (x, y) of the last frame; undefined outside the plot. */
export function pointerValue(s: ViewerState, x: number, y: number): PointerValue | undefined {
  const p = s.plot;
  if (x < p.left || x >= p.left + p.width || y < p.top || y >= p.top + p.height) return undefined;
  const sample = s.start + ((x - p.left) * (s.end - s.start)) / p.width;
  const row = Math.floor((y - p.top) / p.rowHeight);
  const drawn = s.rows[row];
  if (!drawn) return undefined;
  const out: PointerValue = { seconds: sample / s.rate, row, label: drawn.label, unit: drawn.unit };
  if (s.level === 0) {
    const v = drawn.values[Math.floor(sample) - s.valuesStart];
    if (v !== undefined && !Number.isNaN(v)) out.value = v;
  } else {
    const i = Math.floor(sample / 4 ** s.level) - s.valuesStart;
    const lo = drawn.values[2 * i];
    const hi = drawn.values[2 * i + 1];
    if (lo !== undefined && hi !== undefined && !Number.isNaN(lo)) out.value = [lo, hi];
  }
  return out;
}

function formatValue(v: number): string {
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 1 ? v.toFixed(1) : v.toPrecision(2);
}

export function attachPointer(viewer: SignalViewer, canvas: HTMLCanvasElement, overlay: HTMLCanvasElement, readout: HTMLElement | null): () => void {
  const ratio = () => window.devicePixelRatio || 1;
  const at = (event: MouseEvent) => {
    const rect = canvas.getBoundingClientRect();
    return { x: (event.clientX - rect.left) * ratio(), y: (event.clientY - rect.top) * ratio() };
  };
  let ruler: { x0: number; y0: number; x1: number; y1: number; dragging: boolean } | undefined;
  let cursorX: number | undefined;

  const draw = () => {
    const s = viewer.last;
    if (overlay.width !== canvas.width) overlay.width = canvas.width;
    if (overlay.height !== canvas.height) overlay.height = canvas.height;
    const ctx = overlay.getContext('2d')!;
    ctx.clearRect(0, 0, overlay.width, overlay.height);
    if (!s) return;
    if (cursorX !== undefined) {
      ctx.fillStyle = '#00000030';
      ctx.fillRect(Math.round(cursorX), s.plot.top, 1, s.plot.height);
    }
    if (!ruler) {
      delete overlay.dataset['measure'];
      return;
    }
    const measured = measure(s, ruler);
    ctx.strokeStyle = '#d32f2f';
    ctx.fillStyle = '#d32f2f';
    ctx.lineWidth = 1;
    ctx.strokeRect(Math.min(ruler.x0, ruler.x1) + 0.5, Math.min(ruler.y0, ruler.y1) + 0.5, Math.abs(ruler.x1 - ruler.x0), Math.abs(ruler.y1 - ruler.y0));
    if (measured) {
      ctx.font = '12px system-ui, sans-serif';
      ctx.textBaseline = 'bottom';
      const text = `Δt ${formatValue(measured.seconds * 1000)} ms (${formatValue(1 / Math.max(measured.seconds, 1e-9))} Hz) · Δ ${formatValue(measured.amplitude)} ${measured.unit}`;
      // The measurement as text too, for people reading the page with tools (and for the tests).
      overlay.dataset['measure'] = text;
      const w = ctx.measureText(text).width + 8;
      const x = Math.min(Math.max(ruler.x1, s.plot.left), s.plot.left + s.plot.width - w);
      ctx.fillStyle = '#ffffffe0';
      ctx.fillRect(x, Math.min(ruler.y0, ruler.y1) - 18, w, 17);
      ctx.fillStyle = '#d32f2f';
      ctx.fillText(text, x + 4, Math.min(ruler.y0, ruler.y1) - 3);
    }
  };

  const onMove = (event: MouseEvent) => {
    const s = viewer.last;
    const p = at(event);
    if (ruler?.dragging) {
      ruler.x1 = p.x;
      ruler.y1 = p.y;
    }
    if (!s) return;
    const under = pointerValue(s, p.x, p.y);
    cursorX = under ? p.x : undefined;
    if (readout) {
      const seconds = under ? viewer.formatTime(under.seconds, 1 / s.rate) : '';
      const value = under?.value === undefined ? '' : Array.isArray(under.value) ? `${formatValue(under.value[0])} … ${formatValue(under.value[1])} ${under.unit}` : `${formatValue(under.value)} ${under.unit}`;
      readout.textContent = under ? `${seconds} · ${under.label} ${value}` : '';
    }
    draw();
  };
  const onDown = (event: MouseEvent) => {
    if (event.button !== 0) return;
    if (!event.shiftKey) {
      ruler = undefined;
      draw();
      return;
    }
    const p = at(event);
    ruler = { x0: p.x, y0: p.y, x1: p.x, y1: p.y, dragging: true };
    event.preventDefault();
  };
  const onUp = () => {
    if (ruler) ruler.dragging = false;
  };
  const onLeave = () => {
    cursorX = undefined;
    draw();
  };
  canvas.addEventListener('mousemove', onMove);
  window.addEventListener('mousemove', onMove);
  canvas.addEventListener('mousedown', onDown);
  window.addEventListener('mouseup', onUp);
  canvas.addEventListener('mouseleave', onLeave);
  return () => {
    canvas.removeEventListener('mousemove', onMove);
    window.removeEventListener('mousemove', onMove);
    canvas.removeEventListener('mousedown', onDown);
    window.removeEventListener('mouseup', onUp);
    canvas.removeEventListener('mouseleave', onLeave);
    overlay.getContext('2d')?.clearRect(0, 0, overlay.width, overlay.height);
  };
}

/** The ruler's interval (s) and amplitude (the starting row's unit, from its pixels per unit). */
export function measure(s: ViewerState, r: { x0: number; y0: number; x1: number; y1: number }): { seconds: number; amplitude: number; unit: string } | undefined {
  const row = s.rows[Math.floor((r.y0 - s.plot.top) / s.plot.rowHeight)];
  if (!row || !row.pixelsPerUnit) return undefined;
  const seconds = (Math.abs(r.x1 - r.x0) * (s.end - s.start)) / s.plot.width / s.rate;
  return { seconds, amplitude: Math.abs(r.y1 - r.y0) / row.pixelsPerUnit, unit: row.unit };
}
