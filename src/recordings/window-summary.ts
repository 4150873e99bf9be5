/**
 * What a window of one channel looks like in numbers: min, max, mean and standard deviation; a Welch PSD
 * (`signals/welch-psd.ts`) and from it the dominant frequency, the power in the classic EEG bands and at the
 * mains frequencies; and flags for a flat, clipped or bad channel. Pure: samples in, numbers out.
 */
import { microvoltFactor } from '../signals/channel-scale.js';
import { peakFrequency, segmentLength, welch, type Spectrum } from '../signals/welch-psd.js';

/** The bands, in Hz, [from, to): delta to gamma as EEG readers name them (gamma stops at 80 Hz). */
export const BANDS = { delta: [0.5, 4], theta: [4, 8], alpha: [8, 13], beta: [13, 30], gamma: [30, 80] } as const;
export type Band = keyof typeof BANDS;

/** Half the width, Hz, of the band counted as line noise around 50 and 60 Hz. */
export const LINE_HALF_WIDTH_HZ = 1;
/** A voltage channel swinging less than this (µV, peak to peak) is flat. */
export const FLAT_MICROVOLTS = 0.1;
/**
 * A channel is clipped when at least this share of its samples (and 5) sit at the limits of what the source
 * could record; when the source names no limits, in runs of 3 or more equal samples at the window's extremes.
 */
export const CLIPPED_SHARE = 0.001;
/** Fewest samples a PSD is computed from; shorter windows answer null spectral fields. */
export const MIN_PSD_SAMPLES = 64;

export interface ChannelFacts {
  label: string;
  type: string;
  unit: string;
  /** `channels.tsv` status: good, bad or n/a. */
  status: string;
  /** The physical values the source could record, when it says (`store-metadata.ts`). */
  range?: [number, number] | undefined;
}

export interface ChannelSummary extends ChannelFacts {
  min: number;
  max: number;
  mean: number;
  /** Population standard deviation. */
  std: number;
  /** Power (unit²) within ±1 Hz of 50 and 60 Hz; null above the Nyquist frequency. */
  line_noise: { hz50: number | null; hz60: number | null };
  /** The frequency of the PSD's largest bin at or above 0.5 Hz; null for a flat or too short window. */
  dominant_hz: number | null;
  /** Power (unit²) in each band, as far as the Nyquist frequency reaches; null when it reaches none of it. */
  band_power: Record<Band, number | null>;
  flags: { flat: boolean; clipped: boolean; bad: boolean };
}

/** The Welch segment for `n` samples at `rate`: a power of two up to four seconds (0.25 Hz bins at most). */
export function psdSegment(n: number, rate: number): number {
  return segmentLength(n, Math.max(8, 4 * rate));
}

/** Power of `s` over [from, to) Hz (density × bin width), or null when the spectrum does not reach `from`. */
function bandPower(s: Spectrum, from: number, to: number): number | null {
  const nyquist = s.freqs[s.freqs.length - 1] ?? 0;
  if (s.freqs.length < 2 || from >= nyquist) return null;
  const df = s.freqs[1]! - s.freqs[0]!;
  let sum = 0;
  for (let k = 0; k < s.freqs.length; k++) if (s.freqs[k]! >= from && s.freqs[k]! < to) sum += s.power[k]! * df;
  return sum;
}

/** Samples at `limits` (within a millionth of the range); with `runsOnly`, only those in runs of 3 or more equal samples. */
function atLimits(values: Float64Array, limits: readonly [number, number], runsOnly: boolean): number {
  const tolerance = (limits[1] - limits[0]) * 1e-6;
  const at = (v: number) => v <= limits[0] + tolerance || v >= limits[1] - tolerance;
  let count = 0;
  let run = 0;
  for (let i = 0; i <= values.length; i++) {
    if (i < values.length && at(values[i]!) && (run === 0 || values[i] === values[i - 1])) {
      run++;
      continue;
    }
    if (!runsOnly || run >= 3) count += run;
    run = i < values.length && at(values[i]!) ? 1 : 0;
  }
  return count;
}

export function summarizeChannel(values: Float64Array, rate: number, channel: ChannelFacts): ChannelSummary {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
  }
  const mean = sum / values.length;
  let squares = 0;
  for (let i = 0; i < values.length; i++) {
    const d = values[i]! - mean;
    squares += d * d;
  }
  const std = Math.sqrt(squares / values.length);
  const factor = microvoltFactor(channel.unit);
  const flat = max === min || (factor !== undefined && (max - min) * factor < FLAT_MICROVOLTS);
  const clipped = !flat && atLimits(values, channel.range ?? [min, max], channel.range === undefined) >= Math.max(5, CLIPPED_SHARE * values.length);
  const spectrum = values.length >= MIN_PSD_SAMPLES && !flat ? welch(values, rate, psdSegment(values.length, rate)) : undefined;
  const power = (from: number, to: number) => (spectrum ? bandPower(spectrum, from, to) : null);
  const line = (hz: number) => (spectrum && hz + LINE_HALF_WIDTH_HZ < rate / 2 ? power(hz - LINE_HALF_WIDTH_HZ, hz + LINE_HALF_WIDTH_HZ) : null);
  return {
    ...channel,
    min,
    max,
    mean,
    std,
    line_noise: { hz50: line(50), hz60: line(60) },
    dominant_hz: spectrum ? peakFrequency(spectrum, 0.5) : null,
    band_power: Object.fromEntries(Object.entries(BANDS).map(([name, [from, to]]) => [name, power(from, to)])) as Record<Band, number | null>,
    flags: { flat, clipped, bad: channel.status.toLowerCase() === 'bad' },
  };
}
