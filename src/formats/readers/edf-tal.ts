/**
 * EDF+ time-stamped annotation lists (Kemp & Olivan 2003, section 2.2.2): `+onset[\x15duration]\x14text\x14...\x00`.
 * The first TAL of every record is the timekeeping TAL, whose first annotation is empty: its onset is the
 * record's start time. The bytes are scanned in place: an annotation signal is a file's bytes, up to 16 MiB a
 * record, and nothing is allocated for a separator or an empty annotation, nor beyond the annotations asked for.
 */
import type { Annotation } from '../types.js';

const utf8 = new TextDecoder('utf-8');
const latin1 = new TextDecoder('latin1');
const [PLUS, MINUS, DOT, ZERO, NINE] = [0x2b, 0x2d, 0x2e, 0x30, 0x39];

export interface RecordTals {
  /** Start of the record in seconds from the file's start time, when the record has a timekeeping TAL. */
  recordStart: number | undefined;
  /** Onsets are seconds from the file's start time, as written. */
  annotations: Annotation[];
  /** True when annotations were left out because `limit` of them had been taken. */
  capped: boolean;
}

/** The TALs of one record's annotation signal; at most `limit` annotations are taken (the timekeeping TAL is always read). */
export function parseRecordTals(bytes: Uint8Array, limit = Infinity): RecordTals {
  const annotations: Annotation[] = [];
  let recordStart: number | undefined;
  let first = true;
  let i = 0;
  while (i < bytes.length) {
    if (bytes[i] === 0) {
      i++;
      continue;
    }
    let end = bytes.indexOf(0, i);
    if (end < 0) end = bytes.length;
    const tal = i;
    i = end + 1;
    const wasFirst = first;
    first = false;
    const headEnd = find(bytes, 0x14, tal, end);
    const sep = find(bytes, 0x15, tal, headEnd);
    if (!isNumber(bytes, tal, sep, true) || (sep + 1 < headEnd && !isNumber(bytes, sep + 1, headEnd, false))) continue;
    let onset: number | undefined;
    // The texts: each ends at the next 0x14, the last at the TAL's end.
    for (let start = headEnd + 1, k = 1; start < end; k++) {
      const stop = find(bytes, 0x14, start, end);
      if (stop > start) {
        if (annotations.length >= limit) return { recordStart, annotations, capped: true };
        onset ??= Number(latin1.decode(bytes.subarray(tal, sep)));
        const duration = sep + 1 < headEnd ? Number(latin1.decode(bytes.subarray(sep + 1, headEnd))) : 0;
        annotations.push({ onset, duration, description: utf8.decode(bytes.subarray(start, stop)) });
      } else if (k === 1 && wasFirst) {
        recordStart = Number(latin1.decode(bytes.subarray(tal, sep)));
      }
      start = stop + 1;
    }
  }
  return { recordStart, annotations, capped: false };
}

/** The index of the first `value` in bytes [from, to), or `to`. */
function find(bytes: Uint8Array, value: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (bytes[i] === value) return i;
  return to;
}

/** Whether bytes [from, to) are digits with at most one point after the first (`[+-]\d+(\.\d*)?` for an onset, `\d+(\.\d*)?` for a duration). */
function isNumber(bytes: Uint8Array, from: number, to: number, signed: boolean): boolean {
  let i = from;
  if (signed) {
    if (bytes[i] !== PLUS && bytes[i] !== MINUS) return false;
    i++;
  }
  const digitsFrom = i;
  while (i < to && bytes[i]! >= ZERO && bytes[i]! <= NINE) i++;
  if (i === digitsFrom) return false;
  if (i < to && bytes[i] === DOT) i++;
  while (i < to && bytes[i]! >= ZERO && bytes[i]! <= NINE) i++;
  return i === to;
}
