/**
 * The spectrum panel: Welch PSD of each row on screen over the window (the drawn values, so after montage and
 * filters — the filters' effect shows), on a log power axis, and the spectrogram of one chosen row.
 */
import type { ViewerState } from './signal-viewer.js';
import { segmentLength, spectrogram, welch } from '../../signals/welch-psd.js';

export interface SpectrumState {
  /** The window the spectra were computed over, in samples [start, end). */
  start: number;
  end: number;
  freqs: number[];
  /** Each row's spectrum with the colour its line and its legend entry are drawn in. */
  rows: Array<{ label: string; colour: string; power: number[]; peakHz: number }>;
  spectrogram?: { label: string; times: number[]; freqs: number[] } | undefined;
}

/** Computes and draws; undefined (with `note` set) when the frame has no samples to analyse. */
/**
 * A colour per row, apart from its neighbours (hues a golden angle apart, dark enough on white): the traces'
 * colours are per type, and sixteen EEG lines in one blue could not be told apart.
 */
export function spectrumColour(i: number): string {
  const hue = (i * 137.508) % 360;
  return hslHex(hue, 0.7, i % 2 ? 0.38 : 0.5);
}

function hslHex(h: number, s: number, l: number): string {
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const c = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255).toString(16).padStart(2, '0');
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}

/** The legend under the PSD: one entry per line, its colour and the row's label (and peak). */
function fillLegend(legend: HTMLElement | null, entries: Array<{ label: string; colour: string; peakHz: number }>): void {
  if (!legend) return;
  legend.replaceChildren(
    ...entries.map((e) => {
      const item = document.createElement('li');
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = e.colour;
      item.dataset['colour'] = e.colour;
      item.append(swatch, `${e.label}`);
      item.title = `${e.label}: peak at ${e.peakHz.toFixed(1)} Hz`;
      return item;
    }),
  );
}

export function drawSpectrum(s: ViewerState, psdCanvas: HTMLCanvasElement, sgCanvas: HTMLCanvasElement, chosen: string, note: HTMLElement | null, legend: HTMLElement | null = null): SpectrumState | undefined {
  if (s.level !== 0) {
    if (note) note.textContent = 'Zoom in to the samples (level 0) for spectra.';
    return undefined;
  }
  const rows = s.rows.filter((r) => r.values.length >= 16 && !r.values.some(Number.isNaN));
  if (rows.length === 0) return undefined;
  const size = segmentLength(rows[0]!.values.length, Math.min(1024, 2 ** Math.ceil(Math.log2(s.rate * 2))));
  const spectra = rows.map((r, i) => ({ row: r, colour: spectrumColour(i), spectrum: welch(r.values, s.rate, size) }));
  const freqs = spectra[0]!.spectrum.freqs;
  const fitted = fitCanvas(psdCanvas);
  const ctx = psdCanvas.getContext('2d')!;
  const { width, height } = fitted;
  const m = { left: 56, right: 10, top: 10, bottom: 28 };
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  let lo = Infinity;
  let hi = -Infinity;
  for (const { spectrum } of spectra) {
    for (let k = 1; k < spectrum.power.length; k++) {
      const p = spectrum.power[k]!;
      if (p > 0) {
        lo = Math.min(lo, Math.log10(p));
        hi = Math.max(hi, Math.log10(p));
      }
    }
  }
  lo = Math.max(lo, hi - 8);
  lo = Math.floor(lo);
  hi = Math.ceil(hi);
  if (!(hi > lo)) hi = lo + 1;
  const fMax = s.rate / 2;
  const xOf = (f: number) => m.left + (f / fMax) * (width - m.left - m.right);
  const yOf = (log: number) => m.top + ((hi - log) / (hi - lo)) * (height - m.top - m.bottom);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#444';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  for (let d = lo; d <= hi; d++) {
    ctx.fillStyle = '#e4e4e4';
    ctx.fillRect(m.left, Math.round(yOf(d)), width - m.left - m.right, 1);
    ctx.fillStyle = '#444';
    ctx.fillText(`1e${d}`, m.left - 4, yOf(d));
  }
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  const fStep = fMax > 200 ? 50 : fMax > 60 ? 10 : 5;
  for (let f = 0; f <= fMax; f += fStep) ctx.fillText(`${f}`, xOf(f), height - m.bottom + 4);
  ctx.fillText(`Hz · power density (${rows[0]!.unit}²/Hz, log)`, (m.left + width) / 2, height - 13);
  for (const { colour, spectrum } of spectra) {
    ctx.strokeStyle = colour;
    ctx.globalAlpha = 0.85;
    ctx.beginPath();
    for (let k = 1; k < spectrum.power.length; k++) {
      const y = yOf(Math.max(lo, Math.log10(Math.max(spectrum.power[k]!, 1e-30))));
      if (k === 1) ctx.moveTo(xOf(freqs[k]!), y);
      else ctx.lineTo(xOf(freqs[k]!), y);
    }
    ctx.stroke();
  }
  ctx.globalAlpha = 1;

  const target = rows.find((r) => r.label === chosen) ?? rows[0]!;
  const sg = spectrogram(target.values, s.rate, segmentLength(target.values.length / 8, Math.max(64, size / 2)));
  drawSpectrogram(sgCanvas, sg, s.rate, target.label);
  if (note) note.textContent = `${(target.values.length / s.rate).toFixed(1)} s, segments of ${size} samples`;
  const out = spectra.map(({ row, colour, spectrum }) => {
    let best = 0;
    for (let k = 1; k < spectrum.power.length; k++) if (spectrum.power[k]! > spectrum.power[best]!) best = k;
    return { label: row.label, colour, power: [...spectrum.power], peakHz: freqs[best]! };
  });
  fillLegend(legend, out);
  return {
    start: s.valuesStart,
    end: s.valuesStart + rows[0]!.values.length,
    freqs: [...freqs],
    rows: out,
    spectrogram: { label: target.label, times: [...sg.times], freqs: [...sg.freqs] },
  };
}

function fitCanvas(canvas: HTMLCanvasElement): { width: number; height: number } {
  const ratio = window.devicePixelRatio || 1;
  const width = Math.max(1, Math.round(canvas.clientWidth * ratio));
  const height = Math.max(1, Math.round(canvas.clientHeight * ratio));
  if (canvas.width !== width) canvas.width = width;
  if (canvas.height !== height) canvas.height = height;
  return { width, height };
}

/** Time across, frequency up, log power as a grey-to-dark colour ramp (the top 6 decades). */
function drawSpectrogram(canvas: HTMLCanvasElement, sg: ReturnType<typeof spectrogram>, rate: number, label: string): void {
  const { width, height } = fitCanvas(canvas);
  const ctx = canvas.getContext('2d')!;
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  const m = { left: 40, right: 10, top: 10, bottom: 28 };
  const cols = sg.power.length;
  if (cols === 0) return;
  const bins = sg.freqs.length;
  let hi = -Infinity;
  for (const p of sg.power) for (let k = 1; k < bins; k++) hi = Math.max(hi, Math.log10(Math.max(p[k]!, 1e-30)));
  const lo = hi - 6;
  const image = ctx.createImageData(width - m.left - m.right, height - m.top - m.bottom);
  for (let x = 0; x < image.width; x++) {
    const p = sg.power[Math.min(cols - 1, Math.floor((x / image.width) * cols))]!;
    for (let y = 0; y < image.height; y++) {
      const k = Math.min(bins - 1, Math.floor(((image.height - 1 - y) / image.height) * bins));
      const v = Math.min(1, Math.max(0, (Math.log10(Math.max(p[k]!, 1e-30)) - lo) / (hi - lo)));
      const i = (y * image.width + x) * 4;
      // Viridis-like: dark blue → teal → yellow.
      image.data[i] = Math.round(68 + v * (253 - 68) * v);
      image.data[i + 1] = Math.round(1 + v * 230);
      image.data[i + 2] = Math.round(84 + (1 - v) * 60 - v * 50);
      image.data[i + 3] = 255;
    }
  }
  ctx.putImageData(image, m.left, m.top);
  ctx.fillStyle = '#444';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'middle';
  const fMax = rate / 2;
  const fStep = fMax > 200 ? 50 : fMax > 60 ? 20 : 10;
  for (let f = 0; f <= fMax; f += fStep) ctx.fillText(`${f}`, m.left - 4, m.top + (1 - f / fMax) * image.height);
  ctx.textAlign = 'center';
  ctx.textBaseline = 'top';
  ctx.fillText(`${label}: Hz over the ${(sg.times.at(-1)! + sg.times[0]!).toFixed(1)} s on screen`, (m.left + width) / 2, height - 13);
}
