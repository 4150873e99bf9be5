/**
 * The EDF/BDF header (EDF 1992, EDF+ 2003, BioSemi BDF): fixed 256-byte part, then ns*256 bytes of signal
 * fields stored field by field. Every field is checked against the file size, so a damaged header fails with
 * a sentence instead of leading to a huge allocation.
 */
import { CorruptOrTruncatedError, EmptyRecordingError, UnsupportedFormatError } from '../conversion-errors.js';
import type { SourceFormat } from '../types.js';
import { asciiField, integerField, numberField } from './ascii-field.js';
import { checkSamplingRate } from '../recording-limits.js';

export interface EdfSignal {
  label: string;
  transducer: string;
  unit: string;
  physicalMin: number;
  physicalMax: number;
  digitalMin: number;
  digitalMax: number;
  prefilter: string;
  /** Samples per data record. */
  samplesPerRecord: number;
  /** True for an `EDF Annotations` / `BDF Annotations` signal (text, not samples). */
  isAnnotation: boolean;
  /** Byte offset of this signal's samples inside a record. */
  recordOffset: number;
}

export interface EdfHeader {
  format: SourceFormat;
  /** 2 for EDF, 3 for BDF. */
  bytesPerSample: 2 | 3;
  /** EDF+D / BDF+D: records may have gaps. */
  discontinuous: boolean;
  patientId: string;
  recordingId: string;
  /** Naive ISO date-time from the header, or null when the date or time field is invalid. */
  startTime: string | null;
  headerBytes: number;
  /** Records the data section holds completely (computed from the file size when the field is -1). */
  recordCount: number;
  /** The record count the header announced (-1 when unknown). */
  declaredRecordCount: number;
  recordDuration: number;
  recordBytes: number;
  signals: EdfSignal[];
  flags: string[];
}

/**
 * The shortest data record taken. Rates are samples per record over its duration, so a duration such as
 * "1e-320" (a denormal, still above 0) would give an infinite rate.
 */
const minRecordDuration = 1e-6;

const months = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];

/** Parses and checks the header. `bytes` must hold at least the first 256 bytes, or the whole header. */
export function parseEdfHeader(bytes: Uint8Array, fileSize: number, fileName: string): EdfHeader {
  if (fileSize === 0) throw new EmptyRecordingError(`${fileName} is empty (0 bytes).`);
  if (fileSize < 256) {
    throw new CorruptOrTruncatedError(`${fileName} is ${fileSize} bytes long; an EDF/BDF header alone needs 256 bytes.`);
  }
  const isBdf = bytes[0] === 0xff && asciiField(bytes, 1, 7) === 'BIOSEMI';
  const isEdf = !isBdf && asciiField(bytes, 0, 8) === '0';
  if (!isBdf && !isEdf) {
    if (asciiField(bytes, 0, 3) === 'GDF') throw new UnsupportedFormatError(`${fileName} is a GDF file, which is not supported.`);
    throw new CorruptOrTruncatedError(`${fileName} is not an EDF or BDF file: its version field is not "0" or "\\xFFBIOSEMI".`);
  }
  const reserved = asciiField(bytes, 192, 44);
  const plus = isBdf ? /^BDF\+[CD]/.test(reserved) : /^EDF\+[CD]/.test(reserved);
  const format: SourceFormat = isBdf ? (plus ? 'bdf+' : 'bdf') : plus ? 'edf+' : 'edf';
  const flags: string[] = [];

  const ns = integerField(bytes, 252, 4);
  if (ns === undefined || ns < 1) throw corrupt(fileName, `the number of signals field ("${asciiField(bytes, 252, 4)}") is not a positive integer`);
  const headerBytes = 256 * (ns + 1);
  const declaredHeader = integerField(bytes, 184, 8);
  if (declaredHeader !== headerBytes) {
    throw corrupt(fileName, `the header size field says ${asciiField(bytes, 184, 8) || 'nothing'} but ${ns} signals need ${headerBytes} bytes`);
  }
  if (fileSize < headerBytes) {
    throw new CorruptOrTruncatedError(`${fileName} is truncated: its header needs ${headerBytes} bytes but the file has ${fileSize}.`);
  }
  if (bytes.length < headerBytes) throw new RangeError('parseEdfHeader needs the whole header');

  const duration = numberField(bytes, 244, 8);
  if (duration === undefined || duration < 0) throw corrupt(fileName, `the data record duration ("${asciiField(bytes, 244, 8)}") is not a number of seconds`);
  const declaredRecords = integerField(bytes, 236, 8);
  if (declaredRecords === undefined || declaredRecords < -1) throw corrupt(fileName, `the number of data records ("${asciiField(bytes, 236, 8)}") is not an integer`);

  const field = (index: number, offset: number, width: number) => 256 + offset * ns + index * width;
  const signals: EdfSignal[] = [];
  let recordOffset = 0;
  const bytesPerSample = isBdf ? 3 : 2;
  const [minDigital, maxDigital] = isBdf ? [-8388608, 8388607] : [-32768, 32767];
  for (let i = 0; i < ns; i++) {
    const label = asciiField(bytes, field(i, 0, 16), 16);
    const isAnnotation = label === 'EDF Annotations' || label === 'BDF Annotations';
    const nr = integerField(bytes, field(i, 216, 8), 8);
    if (nr === undefined || nr < 0) throw corrupt(fileName, `signal ${i + 1} (${label}) has no valid number of samples per record`);
    const physicalMin = numberField(bytes, field(i, 104, 8), 8);
    const physicalMax = numberField(bytes, field(i, 112, 8), 8);
    const digitalMin = integerField(bytes, field(i, 120, 8), 8);
    const digitalMax = integerField(bytes, field(i, 128, 8), 8);
    if (!isAnnotation) {
      if (physicalMin === undefined || physicalMax === undefined) throw corrupt(fileName, `signal ${i + 1} (${label}) has no valid physical minimum and maximum`);
      if (digitalMin === undefined || digitalMax === undefined || digitalMin >= digitalMax) {
        throw corrupt(fileName, `signal ${i + 1} (${label}) has an invalid digital range`);
      }
      if (digitalMin < minDigital || digitalMax > maxDigital) {
        throw corrupt(fileName, `signal ${i + 1} (${label}) has a digital range beyond ${bytesPerSample * 8}-bit integers`);
      }
      if (physicalMin === physicalMax) flags.push(`zero_physical_range:${label}`);
    }
    signals.push({
      label,
      transducer: asciiField(bytes, field(i, 16, 80), 80),
      unit: asciiField(bytes, field(i, 96, 8), 8),
      physicalMin: physicalMin ?? 0,
      physicalMax: physicalMax ?? 0,
      digitalMin: digitalMin ?? minDigital,
      digitalMax: digitalMax ?? maxDigital,
      prefilter: asciiField(bytes, field(i, 136, 80), 80),
      samplesPerRecord: nr,
      isAnnotation,
      recordOffset,
    });
    recordOffset += nr * bytesPerSample;
  }
  const recordBytes = recordOffset;
  const dataSignals = signals.filter((s) => !s.isAnnotation && s.samplesPerRecord > 0);
  if (dataSignals.length === 0) throw new EmptyRecordingError(`${fileName} has no signal channels (only annotations).`);
  if (duration < minRecordDuration) {
    throw corrupt(fileName, `the data record duration ("${asciiField(bytes, 244, 8)}") is ${duration === 0 ? '0' : 'shorter than 1 µs'} although the file has signal channels`);
  }
  for (const signal of dataSignals) {
    checkSamplingRate(fileName, signal.samplesPerRecord / duration, `${signal.samplesPerRecord} samples of ${signal.label} in a data record of ${asciiField(bytes, 244, 8)} s`);
  }

  const dataBytes = fileSize - headerBytes;
  const fullRecords = Math.floor(dataBytes / recordBytes);
  const remainder = dataBytes - fullRecords * recordBytes;
  let recordCount: number;
  if (declaredRecords === -1) {
    recordCount = fullRecords;
    flags.push('record_count_from_file_size');
    if (remainder > 0) flags.push('truncated_last_record');
  } else if (fullRecords >= declaredRecords) {
    recordCount = declaredRecords;
    if (dataBytes > declaredRecords * recordBytes) flags.push('trailing_bytes');
  } else if (fullRecords === declaredRecords - 1 && remainder > 0) {
    recordCount = fullRecords;
    flags.push('truncated_last_record');
  } else {
    throw new CorruptOrTruncatedError(
      `${fileName} is truncated: the header announces ${declaredRecords} data records of ${recordBytes} bytes, ` +
        `but the file holds only ${fullRecords} (${declaredRecords * recordBytes - dataBytes} bytes missing).`,
    );
  }
  if (recordCount === 0) {
    if (remainder > 0 || declaredRecords > 0) {
      throw new CorruptOrTruncatedError(`${fileName} is truncated: it ends before its first complete data record.`);
    }
    throw new EmptyRecordingError(`${fileName} holds no data records.`);
  }

  const patientId = asciiField(bytes, 8, 80);
  const recordingId = asciiField(bytes, 88, 80);
  return {
    format,
    bytesPerSample,
    discontinuous: plus && /^[EB]DF\+D/.test(reserved),
    patientId,
    recordingId,
    startTime: parseStartTime(asciiField(bytes, 168, 8), asciiField(bytes, 176, 8), plus ? recordingId : ''),
    headerBytes,
    recordCount,
    declaredRecordCount: declaredRecords,
    recordDuration: duration,
    recordBytes,
    signals,
    flags,
  };
}

function corrupt(fileName: string, what: string): CorruptOrTruncatedError {
  return new CorruptOrTruncatedError(`${fileName} has a corrupt header: ${what}.`);
}

/** `dd.mm.yy` + `hh.mm.ss`; EDF+ gives the 4-digit year in the recording id (`Startdate dd-MMM-yyyy`). */
function parseStartTime(date: string, time: string, recordingId: string): string | null {
  const d = /^(\d\d)\.(\d\d)\.(\d\d)$/.exec(date);
  const t = /^(\d\d)[.:](\d\d)[.:](\d\d)$/.exec(time);
  if (!d || !t) return null;
  const yy = Number(d[3]);
  // EDF clipping rule: 85-99 are 1985-1999, 00-84 are 2000-2084.
  let year = yy >= 85 ? 1900 + yy : 2000 + yy;
  const plusDate = /^Startdate (\d\d)-([A-Za-z]{3})-(\d{4})/.exec(recordingId);
  if (plusDate && months.includes(plusDate[2]!.toUpperCase())) year = Number(plusDate[3]);
  const [month, day, hour, minute, second] = [Number(d[2]), Number(d[1]), Number(t[1]), Number(t[2]), Number(t[3])];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}`;
}
