/**
 * Bounds on what a recording's header may declare, the same for every reader: a header is a few bytes that can
 * claim anything, and the conversion runs inside `nds serve`, so a claim beyond them is refused before anything
 * is allocated for it (docs/conversion.md).
 */
import { CorruptOrTruncatedError, UnsupportedFormatError } from './conversion-errors.js';

/**
 * The most channels a recording may have. EDF and BDF cannot exceed 9,999 signals, and the densest iEEG and
 * electrode arrays record a few thousand; a BrainVision header or an EEGLAB `nbchan` may claim millions in a
 * few megabytes, and every channel costs the writer an entry in its group's `zarr.json` and its buffers.
 */
export const MAX_CHANNELS = 16_384;

/** The highest sampling rate: 1 MHz, far above any EEG, EMG or iEEG amplifier (rates of 10-100 kHz). */
export const MAX_SAMPLING_RATE = 1_000_000;

/** Refuses a recording of more than `MAX_CHANNELS` channels (`unsupported_format`). */
export function checkChannelCount(fileName: string, channels: number): void {
  if (channels > MAX_CHANNELS) {
    throw new UnsupportedFormatError(`${fileName} has ${channels.toLocaleString('en')} channels; nds converts recordings of up to ${MAX_CHANNELS.toLocaleString('en')} channels.`);
  }
}

/**
 * Refuses a sampling rate that is not a finite number of at most `MAX_SAMPLING_RATE` samples per second
 * (`corrupt_or_truncated`); `from` says which header fields gave it.
 */
export function checkSamplingRate(fileName: string, rate: number, from: string): void {
  if (!(rate > 0 && rate <= MAX_SAMPLING_RATE)) {
    throw new CorruptOrTruncatedError(
      `${fileName} has a corrupt header: ${from} means ${rate} samples per second; nds converts recordings of up to ${MAX_SAMPLING_RATE.toLocaleString('en')} samples per second.`,
    );
  }
}
