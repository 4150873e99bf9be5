/**
 * EDF+ time-stamped annotation lists (Kemp & Olivan 2003, section 2.2.2): `+onset[\x15duration]\x14text\x14...\x00`.
 * The first TAL of every record is the timekeeping TAL, whose first annotation is empty: its onset is the
 * record's start time.
 */
import type { Annotation } from '../types.js';

const utf8 = new TextDecoder('utf-8');
const onsetPattern = /^[+-]\d+(\.\d*)?$/;
const durationPattern = /^\d+(\.\d*)?$/;

export interface RecordTals {
  /** Start of the record in seconds from the file's start time, when the record has a timekeeping TAL. */
  recordStart: number | undefined;
  /** Onsets are seconds from the file's start time, as written. */
  annotations: Annotation[];
}

export function parseRecordTals(bytes: Uint8Array): RecordTals {
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
    const parts = splitBytes(bytes.subarray(i, end), 0x14);
    i = end + 1;
    const head = parts[0]!;
    const sep = head.indexOf(0x15);
    const onsetText = utf8.decode(sep < 0 ? head : head.subarray(0, sep));
    const durationText = sep < 0 ? '' : utf8.decode(head.subarray(sep + 1));
    if (!onsetPattern.test(onsetText) || (durationText !== '' && !durationPattern.test(durationText))) {
      first = false;
      continue;
    }
    const onset = Number(onsetText);
    const duration = durationText === '' ? 0 : Number(durationText);
    for (let k = 1; k < parts.length; k++) {
      const text = utf8.decode(parts[k]);
      if (k === 1 && first && text === '') {
        recordStart = onset;
        continue;
      }
      if (text !== '') annotations.push({ onset, duration, description: text });
    }
    first = false;
  }
  return { recordStart, annotations };
}

function splitBytes(bytes: Uint8Array, separator: number): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === separator) {
      parts.push(bytes.subarray(start, i));
      start = i + 1;
    }
  }
  if (start < bytes.length) parts.push(bytes.subarray(start));
  return parts;
}
