/**
 * Why a recording could not be converted. Each failure is a class with a literal `code` from docs/conversion.md
 * (`failures[].code`) and a message a person can act on; callers narrow with `isConversionError`.
 */

/** The failure codes of docs/conversion.md, in the order they are usually checked. */
export const failureCodes = [
  'corrupt_or_truncated',
  'unsupported_format',
  'empty_recording',
  'not_continuous',
  'channel_count_mismatch',
  'file_read_error',
] as const;

export type FailureCode = (typeof failureCodes)[number];

/** Base of every conversion failure. The message is safe to show to the dataset's owner. */
export abstract class ConversionError<C extends FailureCode = FailureCode> extends Error {
  abstract readonly code: C;
}

/** The file is shorter than its header says, or a header field is impossible. Re-export the file. */
export class CorruptOrTruncatedError extends ConversionError<'corrupt_or_truncated'> {
  readonly code = 'corrupt_or_truncated' as const;
  override readonly name = 'CorruptOrTruncatedError';
}

/** A valid file of a kind or variant the converter does not read (e.g. ASCII BrainVision). */
export class UnsupportedFormatError extends ConversionError<'unsupported_format'> {
  readonly code = 'unsupported_format' as const;
  override readonly name = 'UnsupportedFormatError';
}

/** The recording holds no samples (or no signal channels). */
export class EmptyRecordingError extends ConversionError<'empty_recording'> {
  readonly code = 'empty_recording' as const;
  override readonly name = 'EmptyRecordingError';
}

/** Epoched or segmented data: the store format holds continuous recordings only. */
export class NotContinuousError extends ConversionError<'not_continuous'> {
  readonly code = 'not_continuous' as const;
  override readonly name = 'NotContinuousError';
}

/** Header and data (or sidecar) disagree on the number of channels. */
export class ChannelCountMismatchError extends ConversionError<'channel_count_mismatch'> {
  readonly code = 'channel_count_mismatch' as const;
  override readonly name = 'ChannelCountMismatchError';
}

/** The file could not be read at all (missing companion, permissions, I/O error). The cause is kept. */
export class FileReadError extends ConversionError<'file_read_error'> {
  readonly code = 'file_read_error' as const;
  override readonly name = 'FileReadError';
}

/** True when `err` is a conversion failure, and, when `code` is given, one with that code. */
export function isConversionError<C extends FailureCode>(err: unknown, code?: C): err is ConversionError<C> {
  return err instanceof ConversionError && (code === undefined || err.code === code);
}
