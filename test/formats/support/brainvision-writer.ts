/** Writes small BrainVision triplets for tests (Brain Products Core Data Format 1.0). */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface TestBrainVision {
  dir: string;
  stem: string;
  format: 'INT_16' | 'INT_32' | 'IEEE_FLOAT_32';
  orientation: 'MULTIPLEXED' | 'VECTORIZED';
  /** samples[c][t]. */
  samples: number[][];
  labels: string[];
  resolutions?: number[];
  units?: string[];
  intervalUs?: number;
  /** Names written into DataFile/MarkerFile (default the real ones). */
  dataFileName?: string;
  markerFileName?: string;
  /** 'latin-1' writes no Codepage line and encodes text as latin-1. */
  codepage?: 'UTF-8' | 'latin-1';
  markers?: string[];
  dataPoints?: boolean;
}

export async function writeBrainVision(spec: TestBrainVision): Promise<string> {
  const nCh = spec.labels.length;
  const n = spec.samples[0]!.length;
  const cp = spec.codepage ?? 'UTF-8';
  const lines = [
    'Brain Vision Data Exchange Header File Version 1.0',
    '',
    '[Common Infos]',
    ...(cp === 'UTF-8' ? ['Codepage=UTF-8'] : []),
    `DataFile=${spec.dataFileName ?? `${spec.stem}.eeg`}`,
    `MarkerFile=${spec.markerFileName ?? `${spec.stem}.vmrk`}`,
    'DataFormat=BINARY',
    `DataOrientation=${spec.orientation}`,
    `NumberOfChannels=${nCh}`,
    ...(spec.dataPoints ? [`DataPoints=${n}`] : []),
    `SamplingInterval=${spec.intervalUs ?? 2000}`,
    '',
    '[Binary Infos]',
    `BinaryFormat=${spec.format}`,
    '',
    '[Channel Infos]',
    ...spec.labels.map((l, i) => `Ch${i + 1}=${l.replaceAll(',', '\\1')},,${spec.resolutions?.[i] ?? 0.1},${spec.units?.[i] ?? 'µV'}`),
    '',
  ];
  const encode = (text: string) => (cp === 'UTF-8' ? Buffer.from(text, 'utf8') : Buffer.from(text, 'latin1'));
  await writeFile(join(spec.dir, `${spec.stem}.vhdr`), encode(lines.join('\r\n')));
  const size = spec.format === 'INT_16' ? 2 : 4;
  const data = Buffer.alloc(nCh * n * size);
  for (let c = 0; c < nCh; c++) {
    for (let t = 0; t < n; t++) {
      const at = (spec.orientation === 'MULTIPLEXED' ? t * nCh + c : c * n + t) * size;
      const v = spec.samples[c]![t]!;
      if (spec.format === 'INT_16') data.writeInt16LE(v, at);
      else if (spec.format === 'INT_32') data.writeInt32LE(v, at);
      else data.writeFloatLE(v, at);
    }
  }
  await writeFile(join(spec.dir, `${spec.stem}.eeg`), data);
  const vmrk = [
    'Brain Vision Data Exchange Marker File, Version 1.0',
    '',
    '[Common Infos]',
    ...(cp === 'UTF-8' ? ['Codepage=UTF-8'] : []),
    `DataFile=${spec.stem}.eeg`,
    '',
    '[Marker Infos]',
    'Mk1=New Segment,,1,1,0,20200102030405123456',
    ...(spec.markers ?? []).map((m, i) => `Mk${i + 2}=${m}`),
    '',
  ];
  await writeFile(join(spec.dir, `${spec.stem}.vmrk`), encode(vmrk.join('\r\n')));
  return join(spec.dir, `${spec.stem}.vhdr`);
}
