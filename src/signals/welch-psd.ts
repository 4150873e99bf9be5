/**
 * Power spectral density by Welch's method (Hann-windowed segments, half overlapping, averaged periodograms,
 * one-sided density in unit²/Hz as scipy.signal.welch with `scaling='density'`), and a spectrogram (the
 * same periodograms kept apart). Pure; the FFT is fft.js.
 */
import FFT from 'fft.js';

export interface Spectrum {
  /** Bin frequencies in Hz, 0 .. rate/2. */
  freqs: Float64Array;
  /** Power density per bin (unit²/Hz). */
  power: Float64Array;
}

export interface Spectrogram {
  freqs: Float64Array;
  /** Centre of each segment in seconds from the signal's first sample. */
  times: Float64Array;
  /** power[t][f]. */
  power: Float64Array[];
}

/** The largest power of two ≤ `n` and ≤ `max` (at least 8). */
export function segmentLength(n: number, max: number): number {
  let size = 8;
  while (size * 2 <= Math.min(n, max)) size *= 2;
  return size;
}

const ffts = new Map<number, FFT>();
const windows = new Map<number, Float64Array>();

function hann(size: number): Float64Array {
  let w = windows.get(size);
  if (!w) {
    w = new Float64Array(size);
    // The periodic Hann window scipy uses for spectral estimates.
    for (let i = 0; i < size; i++) w[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / size);
    windows.set(size, w);
  }
  return w;
}

/** The one-sided periodograms of the half-overlapping segments of `x`, each detrended by its mean. */
function periodograms(x: ArrayLike<number>, rate: number, size: number, each: (power: Float64Array, segmentStart: number) => void): Float64Array {
  let fft = ffts.get(size);
  if (!fft) {
    fft = new FFT(size);
    ffts.set(size, fft);
  }
  const w = hann(size);
  let wSquares = 0;
  for (let i = 0; i < size; i++) wSquares += w[i]! * w[i]!;
  const input = new Array<number>(size);
  const out = fft.createComplexArray() as number[];
  const bins = size / 2 + 1;
  const freqs = new Float64Array(bins);
  for (let k = 0; k < bins; k++) freqs[k] = (k * rate) / size;
  const step = size / 2;
  for (let start = 0; start + size <= x.length; start += step) {
    let mean = 0;
    for (let i = 0; i < size; i++) mean += x[start + i]!;
    mean /= size;
    for (let i = 0; i < size; i++) input[i] = (x[start + i]! - mean) * w[i]!;
    fft.realTransform(out, input);
    const power = new Float64Array(bins);
    for (let k = 0; k < bins; k++) {
      const re = out[2 * k]!;
      const im = out[2 * k + 1]!;
      // One-sided: every bin but DC and Nyquist carries its negative-frequency twin.
      power[k] = ((re * re + im * im) / (rate * wSquares)) * (k === 0 || k === size / 2 ? 1 : 2);
    }
    each(power, start);
  }
  return freqs;
}

/** Welch PSD of `x` at `rate` with segments of `size` samples (a power of two ≤ x.length). */
export function welch(x: ArrayLike<number>, rate: number, size = segmentLength(x.length, 512)): Spectrum {
  let sum: Float64Array | undefined;
  let count = 0;
  const freqs = periodograms(x, rate, size, (power) => {
    if (!sum) sum = power;
    else for (let k = 0; k < power.length; k++) sum[k]! += power[k]!;
    count++;
  });
  const power = sum ?? new Float64Array(freqs.length);
  if (count > 1) for (let k = 0; k < power.length; k++) power[k]! /= count;
  return { freqs, power };
}

export function spectrogram(x: ArrayLike<number>, rate: number, size = segmentLength(x.length / 8, 256)): Spectrogram {
  const power: Float64Array[] = [];
  const times: number[] = [];
  const freqs = periodograms(x, rate, size, (p, start) => {
    power.push(p);
    times.push((start + size / 2) / rate);
  });
  return { freqs, times: Float64Array.from(times), power };
}

/** The frequency of the largest power at or above `fromHz` (skips the DC end). */
export function peakFrequency(s: Spectrum, fromHz = 0.5): number {
  let best = -1;
  let at = 0;
  for (let k = 0; k < s.freqs.length; k++) {
    if (s.freqs[k]! < fromHz) continue;
    if (s.power[k]! > best) {
      best = s.power[k]!;
      at = s.freqs[k]!;
    }
  }
  return at;
}
