/**
 * The display filters offered, per channel type and bounded by the sampling rate: an EEG reader wants a
 * high-pass of 0.1–5 Hz and a low-pass of 15–100 Hz, an EMG one a high-pass of 10–100 Hz and a low-pass up to
 * 1 kHz, an intracranial one low-passes up to 500 Hz for ripples. The menu offers the union over the types on
 * screen, each corner below 0.45 × the rate (a corner at Nyquist removes nothing and the biquad degenerates).
 * Pure.
 */
import { typeKey } from './channel-scale.js';

interface Ranges {
  hp: number[];
  lp: number[];
}

const eegLike: Ranges = { hp: [0.1, 0.3, 0.5, 1, 2, 5], lp: [15, 30, 35, 40, 70, 100] };

export const filterRanges: Readonly<Record<string, Ranges>> = {
  eeg: eegLike,
  eog: eegLike,
  ieeg: { hp: [0.1, 0.5, 1, 5, 10, 80], lp: [40, 70, 100, 200, 300, 500] },
  ecg: { hp: [0.05, 0.5, 1, 5], lp: [40, 100, 150] },
  emg: { hp: [5, 10, 20, 30, 50, 100], lp: [100, 200, 300, 500, 1000] },
  resp: { hp: [0.05, 0.1], lp: [1, 2, 5] },
};

export interface FilterChoices {
  /** Corners in Hz, ascending. */
  hp: number[];
  lp: number[];
}

/** The corners to offer for rows of `types` sampled at `rate` Hz (EEG's when no type has ranges of its own). */
export function filterChoices(types: readonly string[], rate: number): FilterChoices {
  const picked = [...new Set(types.map(typeKey))].map((t) => filterRanges[t]).filter((r): r is Ranges => r !== undefined);
  const ranges = picked.length ? picked : [eegLike];
  const below = 0.45 * rate;
  const union = (key: keyof Ranges) => [...new Set(ranges.flatMap((r) => r[key]))].filter((f) => f < below).sort((a, b) => a - b);
  return { hp: union('hp'), lp: union('lp') };
}

/** A corner as the menu prints it: `0.1 Hz`, `1 kHz`. */
export function formatCorner(hz: number): string {
  return hz >= 1000 ? `${hz / 1000} kHz` : `${hz} Hz`;
}
