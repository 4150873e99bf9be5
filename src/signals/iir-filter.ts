/**
 * Display filters: second-order IIR sections designed with the RBJ audio-EQ cookbook formulas, run
 * forward and backward (zero phase, like scipy's `filtfilt`), with the ends padded by an odd reflection so a
 * window's edges do not ring. Pure: the viewer, the server's plots and the node tests use it.
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
/**
 * The highest harmonic of the line frequency the notch removes, Hz: 50 Hz and its harmonics up to 500 Hz (ten
 * sections), 60 Hz up to 480 Hz (eight). EEG tools notch the line and a few harmonics (FieldTrip's default 50,
 * 100 and 150 Hz; MNE takes the frequencies to remove, its example 60 to 240 Hz); 500 Hz is the top of the
 * intracranial low-pass menu (`filter-choices.ts`). Up to Nyquist instead, a 65,536 Hz recording would need
 * 622 sections, each run twice over every sample.
 */
export const NOTCH_TOP_HZ = 500;

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
 * remove), the notch covers the line frequency and each harmonic up to `NOTCH_TOP_HZ` and below 0.95 × Nyquist.
 */
export function filterSections(filter: DisplayFilter, rate: number): Biquad[] {
  const nyquist = rate / 2;
  const sections: Biquad[] = [];
  if (filter.hp && filter.hp > 0 && filter.hp < nyquist) sections.push(highPass(filter.hp, rate));
  if (filter.lp && filter.lp > 0 && filter.lp < nyquist) sections.push(lowPass(filter.lp, rate));
  if (filter.notch && filter.notch > 0) {
    for (let f = filter.notch; f <= NOTCH_TOP_HZ && f < 0.95 * nyquist; f += filter.notch) sections.push(notch(f, rate));
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

/** A section's state between two spans of one pass (transposed direct form II). */
interface SectionState {
  z1: number;
  z2: number;
}

/** The steady state for a constant input equal to `first`, so a signal that starts away from zero does not kick the filter. */
function steadyState(s: Biquad, first: number): SectionState {
  const dc = (s.b0 + s.b1 + s.b2) / (1 + s.a1 + s.a2);
  const y0 = first * dc;
  return { z1: y0 - s.b0 * first, z2: s.b2 * first - s.a2 * y0 };
}

/** Runs one section over `x[from]` up to (not including) `x[to]` in place, going on from `state` and leaving it where it stopped. */
function runSpan(x: Float64Array, s: Biquad, state: SectionState, from: number, to: number, step: 1 | -1): void {
  const { b0, b1, b2, a1, a2 } = s;
  let { z1, z2 } = state;
  for (let i = from; i !== to; i += step) {
    const xi = x[i]!;
    const yi = b0 * xi + z1;
    z1 = b1 * xi - a1 * yi + z2;
    z2 = b2 * xi - a2 * yi;
    x[i] = yi;
  }
  state.z1 = z1;
  state.z2 = z2;
}

/**
 * The passes over the padded copy `x`: each section forward then backward, in spans of at most `span` samples;
 * yields the samples of each span run.
 */
function* passes(x: Float64Array, sections: readonly Biquad[], span: number): Generator<number, void, void> {
  const n = x.length;
  for (const s of sections) {
    let state = steadyState(s, x[0]!);
    for (let i = 0; i < n; i += span) {
      const end = Math.min(n, i + span);
      runSpan(x, s, state, i, end, 1);
      yield end - i;
    }
    state = steadyState(s, x[n - 1]!);
    for (let i = n - 1; i >= 0; i -= span) {
      const end = Math.max(-1, i - span);
      runSpan(x, s, state, i, end, -1);
      yield i - end;
    }
  }
}

/** The reflection pad `filtfilt` adds on each side of `n` samples asked for `pad`. */
function padLength(n: number, pad: number): number {
  return Math.max(0, Math.min(pad, n - 1));
}

/** Writes `signal` into `x` (its length plus `p` each side) with its odd reflection (2·x[0] − x[k]) each side. */
function padInto(x: Float64Array, signal: Float64Array, p: number): void {
  const n = signal.length;
  const a = signal[0]!;
  const b = signal[n - 1]!;
  for (let i = 0; i < p; i++) {
    x[i] = 2 * a - signal[p - i]!;
    x[p + n + i] = 2 * b - signal[n - 2 - i]!;
  }
  x.set(signal, p);
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
  const p = padLength(n, pad);
  if (scratch.length < n + 2 * p) scratch = new Float64Array(n + 2 * p);
  const x = scratch.subarray(0, n + 2 * p);
  padInto(x, signal, p);
  const steps = passes(x, sections, x.length);
  while (!steps.next().done);
  signal.set(x.subarray(p, p + n));
}

/**
 * `filtfiltInPlace` a span at a time: each step runs one section over at most `span` samples and yields how
 * many, so a caller can let others run between steps; `signal` holds the result once the steps are done. The
 * padded copy is this call's own, so the steps of several calls may interleave.
 */
export function* filtfiltSteps(signal: Float64Array, sections: readonly Biquad[], pad = 0, span = 1 << 16): Generator<number, void, void> {
  const n = signal.length;
  if (n === 0 || sections.length === 0) return;
  const p = padLength(n, pad);
  const x = new Float64Array(n + 2 * p);
  padInto(x, signal, p);
  yield* passes(x, sections, Math.max(1, span));
  signal.set(x.subarray(p, p + n));
}

/**
 * The work of filtering one row of `n` samples with `sections` and `pad`, in section-samples: every sample of
 * the padded row, once forward and once backward through each section (some 4 ns each on one core).
 */
export function filterWork(n: number, sections: number, pad = 0): number {
  if (n === 0 || sections === 0) return 0;
  return (n + 2 * padLength(n, pad)) * sections * 2;
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
