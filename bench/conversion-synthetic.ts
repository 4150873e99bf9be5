/**
 * Synthetic EDF/BDF recordings for the conversion benchmark: n channels of EEG-like signal (a few
 * sinusoids plus band-limited noise, quantised like an amplifier would), written record by record.
 */
import { open } from 'node:fs/promises';

export interface SyntheticSpec {
  path: string;
  bdf: boolean;
  channels: number;
  rate: number;
  /** Target size in bytes; rounded down to whole 1-s records. */
  bytes: number;
  /** Another seed, another signal (files of one dataset differ, as real ones do); default 0. */
  seed?: number;
}

export async function writeSyntheticRecording(spec: SyntheticSpec): Promise<number> {
  const bps = spec.bdf ? 3 : 2;
  const recordBytes = spec.channels * spec.rate * bps;
  const headerBytes = 256 * (spec.channels + 1);
  const records = Math.floor((spec.bytes - headerBytes) / recordBytes);
  const header = Buffer.alloc(headerBytes, 0x20);
  const put = (at: number, text: string) => header.write(text, at, 'latin1');
  if (spec.bdf) {
    header[0] = 0xff;
    put(1, 'BIOSEMI');
  } else put(0, '0');
  put(8, 'X X X X');
  put(88, 'Startdate 23-NOV-2026 X X nds-bench');
  put(168, '23.11.26');
  put(176, '09.00.00');
  put(184, String(headerBytes));
  put(192, spec.bdf ? '24BIT' : '');
  put(236, String(records));
  put(244, '1');
  put(252, String(spec.channels));
  const n = spec.channels;
  const field = (offset: number, width: number, value: (i: number) => string) => {
    for (let i = 0; i < n; i++) put(256 + offset * n + i * width, value(i));
  };
  field(0, 16, (i) => `EEG${i + 1}`);
  field(96, 8, () => 'uV');
  field(104, 8, () => (spec.bdf ? '-262144' : '-16384'));
  field(112, 8, () => (spec.bdf ? '262143' : '16383.5'));
  field(120, 8, () => (spec.bdf ? '-8388608' : '-32768'));
  field(128, 8, () => (spec.bdf ? '8388607' : '32767'));
  field(136, 80, () => 'HP:0.1Hz LP:100Hz');
  field(216, 8, () => String(spec.rate));

  const file = await open(spec.path, 'w');
  await file.write(header, 0, headerBytes, 0);
  // One minute of signal per channel, reused with a drifting offset: generating 4 GiB of noise would dominate.
  const period = 60 * spec.rate;
  const patterns = Array.from({ length: n }, (_, c) => {
    const p = new Int32Array(period);
    let seed = 12345 + c * 7919 + (spec.seed ?? 0) * 104729;
    let noise = 0;
    for (let t = 0; t < period; t++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      noise = 0.95 * noise + ((seed >>> 8) / 16777216 - 0.5) * 8;
      const v = 300 * Math.sin((2 * Math.PI * 10 * t) / spec.rate + c) + 120 * Math.sin((2 * Math.PI * 1.3 * t) / spec.rate) + noise;
      p[t] = Math.round(spec.bdf ? v * 32 : v * 2);
    }
    return p;
  });
  const perWrite = Math.max(1, Math.floor((8 << 20) / recordBytes));
  const buffer = Buffer.alloc(perWrite * recordBytes);
  let position = headerBytes;
  for (let r0 = 0; r0 < records; r0 += perWrite) {
    const k = Math.min(perWrite, records - r0);
    let p = 0;
    for (let r = r0; r < r0 + k; r++) {
      for (let c = 0; c < n; c++) {
        const pattern = patterns[c]!;
        const drift = (r % 97) - 48;
        for (let s = 0, t = (r * spec.rate) % period; s < spec.rate; s++, t = t + 1 === period ? 0 : t + 1) {
          const v = pattern[t]! + drift;
          buffer[p] = v & 0xff;
          buffer[p + 1] = (v >> 8) & 0xff;
          if (spec.bdf) buffer[p + 2] = (v >> 16) & 0xff;
          p += bps;
        }
      }
    }
    await file.write(buffer, 0, k * recordBytes, position);
    position += k * recordBytes;
  }
  await file.close();
  return position;
}
