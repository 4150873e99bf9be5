/**
 * Display filters: second-order IIR sections designed with the RBJ audio-EQ cookbook formulas, run
 * forward and backward (zero phase, like scipy's `filtfilt`), with the ends padded by an odd reflection so a
 * window's edges do not ring. Pure: the viewer and the node tests both use it.
 */

/** One biquad, normalised so a0 = 1: y = b0 x + b1 x1 + b2 x2 − a1 y1 − a2 y2. */
export interface Biquad {
  b0: number;
  b1: number;
  b2: number;
  a1: number;
  a2: number;
}

export interface DisplayFilter {
  /** High-pass corner in Hz (undefined or 0: off). */
  hp?: number | undefined;
  /** Low-pass corner in Hz (undefined or 0: off). */
  lp?: number | undefined;
  /** Line frequency to remove with its harmonics (50 or 60; undefined: off). */
  notch?: number | undefined;
}

/** A Butterworth second-order section's Q; run twice (filtfilt) the corner sits at −6 dB. */
const butterworthQ = Math.SQRT1_2;
/** Notch quality: a −3 dB width of f0/30 (1.7 Hz at 50 Hz). */
export const notchQ = 30;

function normalise(b0: number, b1: number, b2: number, a0: number, a1: number, a2: number): Biquad {
  return { b0: b0 / a0, b1: b1 / a0, b2: b2 / a0, a1: a1 / a0, a2: a2 / a0 };
}

export function highPass(cornerHz: number, rate: number, q = butterworthQ): Biquad {
  const w = (2 * Math.PI * cornerHz) / rate;
  const cos = Math.cos(w);
  const alpha = Math.sin(w) / (2 * q);
  return normalise((1 + cos) / 2, -(1 + cos), (1 + cos) / 2, 1 + alpha, -2 * cos, 1 - alpha);
}

export function lowPass(cornerHz: number, rate: number, q = butterworthQ): Biquad {
  const w = (2 * Math.PI * cornerHz) / rate;
  const cos = Math.cos(w);
  const alpha = Math.sin(w) / (2 * q);
  return normalise((1 - cos) / 2, 1 - cos, (1 - cos) / 2, 1 + alpha, -2 * cos, 1 - alpha);
}

export function notch(centreHz: number, rate: number, q = notchQ): Biquad {
  const w = (2 * Math.PI * centreHz) / rate;
  const cos = Math.cos(w);
  const alpha = Math.sin(w) / (2 * q);
  return normalise(1, -2 * cos, 1, 1 + alpha, -2 * cos, 1 - alpha);
}

/**
 * The sections a display filter needs at `rate`: a corner at or above Nyquist is dropped (nothing to
 * remove), the notch covers the line frequency and each harmonic below 0.95 × Nyquist.
 */
export function filterSections(filter: DisplayFilter, rate: number): Biquad[] {
  const nyquist = rate / 2;
  const sections: Biquad[] = [];
  if (filter.hp && filter.hp > 0 && filter.hp < nyquist) sections.push(highPass(filter.hp, rate));
  if (filter.lp && filter.lp > 0 && filter.lp < nyquist) sections.push(lowPass(filter.lp, rate));
  if (filter.notch && filter.notch > 0) {
    for (let f = filter.notch; f < 0.95 * nyquist; f += filter.notch) sections.push(notch(f, rate));
  }
  return sections;
}

/** |H(f)| of a cascade, for tests and for drawing the filter's response. */
export function magnitude(sections: readonly Biquad[], hz: number, rate: number): number {
  const w = (2 * Math.PI * hz) / rate;
  let gain = 1;
  for (const s of sections) {
    // H(e^jw) = (b0 + b1 e^-jw + b2 e^-2jw) / (1 + a1 e^-jw + a2 e^-2jw)
    const nr = s.b0 + s.b1 * Math.cos(w) + s.b2 * Math.cos(2 * w);
    const ni = -s.b1 * Math.sin(w) - s.b2 * Math.sin(2 * w);
    const dr = 1 + s.a1 * Math.cos(w) + s.a2 * Math.cos(2 * w);
    const di = -s.a1 * Math.sin(w) - s.a2 * Math.sin(2 * w);
    gain *= Math.hypot(nr, ni) / Math.hypot(dr, di);
  }
  return gain;
}

/**
 * Runs one section over `x` in place (transposed direct form II), starting from the steady state for a
 * constant input equal to x[0], so a signal that starts away from zero does not kick the filter.
 */
function runSection(x: Float64Array, s: Biquad, from: number, to: number, step: 1 | -1): void {
  const { b0, b1, b2, a1, a2 } = s;
  const first = x[from]!;
  const dc = (b0 + b1 + b2) / (1 + a1 + a2);
  const y0 = first * dc;
  let z2 = b2 * first - a2 * y0;
  let z1 = y0 - b0 * first;
  for (let i = from; i !== to; i += step) {
    const xi = x[i]!;
    const yi = b0 * xi + z1;
    z1 = b1 * xi - a1 * yi + z2;
    z2 = b2 * xi - a2 * yi;
    x[i] = yi;
  }
}

/**
 * Zero-phase filtering of `signal` by the cascade: each section forward then backward. The signal is first
 * extended by `pad` samples each side with its odd reflection (2·x[0] − x[k]), as scipy's `filtfilt` does,
 * and the extension is cut off again. Returns a new array the length of `signal`.
 */
export function filtfilt(signal: ArrayLike<number>, sections: readonly Biquad[], pad = 0): Float64Array {
  const out = Float64Array.from(signal);
  filtfiltInPlace(out, sections, pad);
  return out;
}

/** The padded copy `filtfiltInPlace` filters, kept between calls: one allocation per viewer, not per row. */
let scratch = new Float64Array(0);

/** `filtfilt` writing its result over `signal`. */
export function filtfiltInPlace(signal: Float64Array, sections: readonly Biquad[], pad = 0): void {
  const n = signal.length;
  if (n === 0 || sections.length === 0) return;
  const p = Math.max(0, Math.min(pad, n - 1));
  if (scratch.length < n + 2 * p) scratch = new Float64Array(n + 2 * p);
  const x = scratch.subarray(0, n + 2 * p);
  const a = signal[0]!;
  const b = signal[n - 1]!;
  for (let i = 0; i < p; i++) {
    x[i] = 2 * a - signal[p - i]!;
    x[p + n + i] = 2 * b - signal[n - 2 - i]!;
  }
  x.set(signal, p);
  for (const s of sections) {
    runSection(x, s, 0, x.length, 1);
    runSection(x, s, x.length - 1, -1, -1);
  }
  signal.set(x.subarray(p, p + n));
}

/**
 * Samples to fetch beside a window so the filters' start-up has died out before the window's first sample:
 * about three time constants of the lowest corner (high-pass or notch width), at least one second.
 */
export function filterMarginSamples(filter: DisplayFilter, rate: number): number {
  let seconds = 1;
  if (filter.hp && filter.hp > 0) seconds = Math.max(seconds, 3 / filter.hp);
  if (filter.notch && filter.notch > 0) seconds = Math.max(seconds, (3 * notchQ) / filter.notch);
  return Math.ceil(Math.min(seconds, 30) * rate);
}

export function filterActive(filter: DisplayFilter): boolean {
  return Boolean((filter.hp && filter.hp > 0) || (filter.lp && filter.lp > 0) || (filter.notch && filter.notch > 0));
}
