/** Types shared by the readers, the BIDS layer and the store writer. */

/** The digital sample type a reader delivers; it is also the dtype of the store's level 0. */
export type SampleType = 'int16' | 'int32' | 'float32' | 'float64';

export type SampleArray = Int16Array | Int32Array | Float32Array | Float64Array;

/** The source format names written into `source.format`. */
export type SourceFormat = 'edf' | 'edf+' | 'bdf' | 'bdf+' | 'brainvision' | 'eeglab';

/** One signal channel as its file describes it. physical = digital * scale + offset (float64). */
export interface ChannelInfo {
  label: string;
  /** BIDS channel type (upper case); a reader's guess until channels.tsv says otherwise. */
  type: string;
  unit: string;
  /** Samples per second. */
  rate: number;
  /** Number of samples this channel holds. */
  nSamples: number;
  scale: number;
  offset: number;
  /** Digital and physical ranges from the header, when the format has them. */
  digitalMin?: number;
  digitalMax?: number;
  physicalMin?: number;
  physicalMax?: number;
  prefilter?: string;
  transducer?: string;
}

/** An annotation (EDF+ TAL, BrainVision marker, EEGLAB event). Onset in seconds from the first sample. */
export interface Annotation {
  onset: number;
  duration: number;
  description: string;
  /** Every column of the BIDS `_events.tsv` row it came from, as written (`n/a` as null); absent for a file's own markers. */
  columns?: Record<string, string | null>;
}

/** A stretch of contiguous samples (EDF+D); onset in seconds from the first sample. */
export interface Segment {
  /** Index of the first sample, counted in records' worth of time: start_s within the stored samples. */
  storedStart: number;
  /** True time of the segment's first sample, in seconds from the first sample of the recording. */
  onset: number;
  duration: number;
}

/**
 * An open recording. `channels` excludes annotation channels. `blocks()` yields the samples in order: each
 * block has one array per channel (same order as `channels`), each the next samples of that channel, with
 * spans proportional to the channels' rates. It can be iterated once. A reader may reuse a block's arrays
 * for the next block, so use or copy them before asking for the next.
 */
export interface RecordingReader {
  readonly format: SourceFormat;
  readonly sampleType: SampleType;
  readonly channels: readonly ChannelInfo[];
  /** Naive local ISO date-time of the first sample (formats carry no time zone), or null if unknown. */
  readonly startTime: string | null;
  /** Notes about recoveries and quirks (e.g. `truncated_last_record`, `brainvision_header_recovered`). */
  readonly flags: readonly string[];
  /** Every file the recording was read from (primary first). */
  readonly files: readonly string[];
  blocks(): AsyncIterable<SampleArray[]>;
  /** The file's own annotations; complete once `blocks()` has been consumed (EDF+ keeps them in records). */
  annotations(): Annotation[];
  /** Contiguous segments; one segment for a continuous recording. Complete after `blocks()`. */
  segments(): Segment[];
  /**
   * SHA-256 (hex) of each of `files`, in the same order. Call it after `blocks()` and before `close()`: the
   * bytes `blocks()` streamed through were hashed on the way, so only what it skipped is read again.
   */
  digests(): Promise<string[]>;
  close(): Promise<void>;
}
