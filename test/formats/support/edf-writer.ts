/** Writes small EDF/EDF+/BDF/BDF+ files for tests, field by field from the EDF spec (independent of the reader). */

export interface TestSignal {
  label: string;
  unit?: string;
  physicalMin?: number;
  physicalMax?: number;
  digitalMin?: number;
  digitalMax?: number;
  prefilter?: string;
  samplesPerRecord: number;
  /** Digital samples, record-major: all of record 0, then record 1 ... (length nr * records). */
  samples?: ArrayLike<number>;
}

export interface TestEdf {
  bdf?: boolean;
  /** 'C' or 'D' for EDF+/BDF+; an annotation signal is added. */
  plus?: 'C' | 'D';
  recordDuration: number;
  records: number;
  /** Written into the header's record count field (default `records`; -1 for unknown). */
  declaredRecords?: number;
  signals: TestSignal[];
  /** EDF+ only: TAL text of each record (without the timekeeping TAL), and record start times. */
  annotations?: string[];
  recordStarts?: number[];
  annotationBytes?: number;
  startDate?: string;
  startTime?: string;
  recordingId?: string;
}

const pad = (text: string, width: number) => text.slice(0, width).padEnd(width, ' ');

export function writeEdf(spec: TestEdf): Uint8Array {
  const bps = spec.bdf ? 3 : 2;
  const signals = [...spec.signals];
  const annBytes = spec.annotationBytes ?? 120;
  if (spec.plus) signals.push({ label: spec.bdf ? 'BDF Annotations' : 'EDF Annotations', samplesPerRecord: annBytes / bps, digitalMin: spec.bdf ? -8388608 : -32768, digitalMax: spec.bdf ? 8388607 : 32767, physicalMin: -1, physicalMax: 1 });
  const ns = signals.length;
  const header = new Uint8Array(256 * (ns + 1));
  const put = (at: number, text: string, width: number) => header.set(new TextEncoder().encode(pad(text, width)), at);
  if (spec.bdf) {
    header[0] = 0xff;
    put(1, 'BIOSEMI', 7);
  } else put(0, '0', 8);
  put(8, 'X X X X', 80);
  put(88, spec.recordingId ?? (spec.plus ? 'Startdate 02-MAR-2021 X X X' : 'test recording'), 80);
  put(168, spec.startDate ?? '02.03.21', 8);
  put(176, spec.startTime ?? '10.11.12', 8);
  put(184, String(256 * (ns + 1)), 8);
  put(192, spec.plus ? `${spec.bdf ? 'BDF' : 'EDF'}+${spec.plus}` : spec.bdf ? '24BIT' : '', 44);
  put(236, String(spec.declaredRecords ?? spec.records), 8);
  put(244, String(spec.recordDuration), 8);
  put(252, String(ns), 4);
  const fields: [number, (s: TestSignal) => string][] = [
    [16, (s) => s.label],
    [80, () => ''],
    [8, (s) => s.unit ?? 'uV'],
    [8, (s) => String(s.physicalMin ?? -3200)],
    [8, (s) => String(s.physicalMax ?? 3200)],
    [8, (s) => String(s.digitalMin ?? (spec.bdf ? -8388608 : -32768))],
    [8, (s) => String(s.digitalMax ?? (spec.bdf ? 8388607 : 32767))],
    [80, (s) => s.prefilter ?? ''],
    [8, (s) => String(s.samplesPerRecord)],
    [32, () => ''],
  ];
  let at = 256;
  for (const [width, get] of fields) {
    for (const s of signals) {
      put(at, get(s), width);
      at += width;
    }
  }
  const recordBytes = signals.reduce((n, s) => n + s.samplesPerRecord * bps, 0);
  const data = new Uint8Array(recordBytes * spec.records);
  for (let r = 0; r < spec.records; r++) {
    let p = r * recordBytes;
    for (const s of signals) {
      if (s.label.endsWith('Annotations')) {
        const start = spec.recordStarts?.[r] ?? r * spec.recordDuration;
        const tal = new TextEncoder().encode(`+${start}\x14\x14\x00${spec.annotations?.[r] ?? ''}`);
        if (tal.length > annBytes) throw new Error('annotation text too long for the record');
        data.set(tal, p);
        p += annBytes;
        continue;
      }
      for (let i = 0; i < s.samplesPerRecord; i++, p += bps) {
        const v = Number(s.samples?.[r * s.samplesPerRecord + i] ?? 0);
        data[p] = v & 0xff;
        data[p + 1] = (v >> 8) & 0xff;
        if (bps === 3) data[p + 2] = (v >> 16) & 0xff;
      }
    }
  }
  const out = new Uint8Array(header.length + data.length);
  out.set(header);
  out.set(data, header.length);
  return out;
}
