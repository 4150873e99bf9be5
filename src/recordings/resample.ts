/**
 * Rational resampling by a polyphase FIR filter, as `scipy.signal.resample_poly` does it: upsample by `up`
 * (zeros between samples), low-pass, keep every `down`-th sample, computing only the outputs kept and only
 * the taps that meet a real sample. The filter is a windowed sinc: cutoff at the lower of the two Nyquist
 * frequencies, Kaiser window β = 8.6 (stopband about −90 dB), half-length 20 × max(up, down) input-rate
 * periods at the upsampled rate, so the transition band is narrow (about 14 % of the output Nyquist on
 * each side of it) and aliases land below −60 dB. Gain is `up`, so a constant passes unchanged. Samples
 * beyond the recording's ends count as zeros (edge effects, as in scipy, within a filter's half-length).
 */

export interface Ratio {
  up: number;
  down: number;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** The smallest `up/down` equal to `to/from` (rates as given; both are rounded to microhertz first). */
export function resampleRatio(from: number, to: number): Ratio {
  const scale = 1_000_000;
  let a = Math.round(from * scale);
  let b = Math.round(to * scale);
  const g = gcd(a, b);
  a /= g;
  b /= g;
  return { up: b, down: a };
}

/** Largest `max(up, down)` accepted: the filter's length grows with it. */
export const MAX_RATIO_TERM = 1000;

function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum;
}

/** The length of the filter `polyphaseFilter` makes for `ratio`: the multiply-adds of an output sample are this ÷ `up`. */
export function filterLength({ up, down }: Ratio): number {
  return 2 * 20 * Math.max(up, down) + 1;
}

const filters = new Map<string, Float64Array>();

/** The filter's taps (length `2 * half + 1`, centred), times `up`. */
export function polyphaseFilter({ up, down }: Ratio): Float64Array {
  const key = `${up}/${down}`;
  const cached = filters.get(key);
  if (cached) return cached;
  const max = Math.max(up, down);
  const length = filterLength({ up, down });
  const half = (length - 1) / 2;
  const cutoff = 1 / max; // of the upsampled Nyquist
  const beta = 8.6;
  const i0beta = besselI0(beta);
  const taps = new Float64Array(length);
  for (let n = 0; n < length; n++) {
    const t = n - half;
    const sinc = t === 0 ? cutoff : Math.sin(Math.PI * cutoff * t) / (Math.PI * t);
    const r = t / half;
    const window = besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0beta;
    taps[n] = sinc * window * up;
  }
  if (filters.size > 32) filters.clear();
  filters.set(key, taps);
  return taps;
}

/**
 * The input samples output samples `[outStart, outStart + outCount)` depend on, as `[first, end)` absolute
 * input indices (not clipped to the recording).
 */
export function inputSpan(ratio: Ratio, outStart: number, outCount: number): { first: number; end: number } {
  const taps = polyphaseFilter(ratio);
  const half = (taps.length - 1) / 2;
  const first = Math.ceil((outStart * ratio.down + half - taps.length + 1) / ratio.up);
  const last = Math.floor(((outStart + outCount - 1) * ratio.down + half) / ratio.up);
  return { first, end: last + 1 };
}

/**
 * Output samples `[outStart, outStart + outCount)` (absolute, at the new rate) of one channel, from `input`,
 * which holds input samples `[inputFirst, inputFirst + input.length)`; samples outside it count as zeros.
 */
export function resampleSpan(ratio: Ratio, input: Float64Array, inputFirst: number, outStart: number, outCount: number, out: Float64Array = new Float64Array(outCount)): Float64Array {
  const taps = polyphaseFilter(ratio);
  const L = taps.length;
  const half = (L - 1) / 2;
  const { up, down } = ratio;
  for (let m = 0; m < outCount; m++) {
    const pos = (outStart + m) * down + half; // index into the upsampled, delayed sequence
    let iFirst = Math.ceil((pos - L + 1) / up);
    let iLast = Math.floor(pos / up);
    if (iFirst < inputFirst) iFirst = inputFirst;
    if (iLast > inputFirst + input.length - 1) iLast = inputFirst + input.length - 1;
    let acc = 0;
    for (let i = iFirst; i <= iLast; i++) acc += input[i - inputFirst]! * taps[pos - i * up]!;
    out[m] = acc;
  }
  return out;
}
