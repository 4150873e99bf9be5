/**
 * Mouse and keyboard for the viewer: drag to scrub (Shift+drag is the ruler's, and in the annotation mode a drag
 * draws a span), wheel to zoom around the
 * cursor, ←/→ scrub, +/- zoom, PageUp/PageDown row pages, Home/End, g/G gain, and the keys the toolbar adds.
 * Keys typed into the toolbar's fields are theirs.
 */
import type { SignalViewer } from './signal-viewer.js';
import { labelGutter } from '../../signals/trace-layout.js';
import { scrub, zoomAround } from './view-window.js';

export const wheelStep = 1.25;

/** `pointerTaken`: true while another mode (annotating) owns a drag on the traces, which then does not scrub. */
export function attachInput(viewer: SignalViewer, canvas: HTMLCanvasElement, keyTarget: HTMLElement, extraKeys: Record<string, () => void> = {}, pointerTaken: () => boolean = () => false): () => void {
  const n = () => viewer.group.nSamples;
  const ratio = () => window.devicePixelRatio || 1;
  /** Fraction (0..1) across the plot of a pointer event, in the same device pixels the layout uses. */
  const anchorOf = (event: MouseEvent) => {
    const rect = canvas.getBoundingClientRect();
    const x = (event.clientX - rect.left) * ratio();
    return Math.min(1, Math.max(0, (x - labelGutter) / viewer.plotWidth()));
  };

  let drag: { x: number; start: number } | undefined;
  const onDown = (event: MouseEvent) => {
    if (event.button !== 0 || event.shiftKey || pointerTaken()) return;
    drag = { x: event.clientX, start: viewer.window.start };
    keyTarget.focus();
    event.preventDefault();
  };
  const onMove = (event: MouseEvent) => {
    if (!drag) return;
    const samplesPerPixel = viewer.window.span / viewer.plotWidth();
    const moved = (event.clientX - drag.x) * ratio() * samplesPerPixel;
    viewer.setWindow(scrub({ start: drag.start, span: viewer.window.span }, -moved, n()));
  };
  const onUp = () => {
    drag = undefined;
  };
  const onWheel = (event: WheelEvent) => {
    event.preventDefault();
    if (event.deltaY === 0) return;
    viewer.setWindow(zoomAround(viewer.window, event.deltaY > 0 ? wheelStep : 1 / wheelStep, anchorOf(event), n()));
  };
  const onKey = (event: KeyboardEvent) => {
    const target = event.target as HTMLElement | null;
    if (target && /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) return;
    const w = viewer.window;
    const step = event.shiftKey ? w.span : w.span / 10;
    const actions: Record<string, () => void> = {
      ArrowLeft: () => viewer.setWindow(scrub(w, -step, n())),
      ArrowRight: () => viewer.setWindow(scrub(w, step, n())),
      '+': () => viewer.setWindow(zoomAround(w, 0.5, 0.5, n())),
      '=': () => viewer.setWindow(zoomAround(w, 0.5, 0.5, n())),
      '-': () => viewer.setWindow(zoomAround(w, 2, 0.5, n())),
      PageUp: () => viewer.pageRows(-1),
      PageDown: () => viewer.pageRows(1),
      Home: () => viewer.setWindow({ start: 0, span: w.span }),
      End: () => viewer.setWindow({ start: n(), span: w.span }),
      g: () => viewer.setGain(viewer.gain / 2),
      G: () => viewer.setGain(viewer.gain * 2),
      ...extraKeys,
    };
    const action = actions[event.key];
    if (!action || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault();
    action();
  };

  canvas.addEventListener('mousedown', onDown);
  window.addEventListener('mousemove', onMove);
  window.addEventListener('mouseup', onUp);
  canvas.addEventListener('wheel', onWheel, { passive: false });
  keyTarget.addEventListener('keydown', onKey);
  return () => {
    canvas.removeEventListener('mousedown', onDown);
    window.removeEventListener('mousemove', onMove);
    window.removeEventListener('mouseup', onUp);
    canvas.removeEventListener('wheel', onWheel);
    keyTarget.removeEventListener('keydown', onKey);
  };
}
