/** Writes small MAT v7.3 files for tests: HDF5 through h5wasm, as MATLAB lays out an EEGLAB struct, then the 512-byte MAT header. */
import { readFile, writeFile, rm } from 'node:fs/promises';
import h5wasm from 'h5wasm/node';

export interface TestMat73 {
  nbchan: number;
  pnts: number;
  srate: number;
  /** Sample-major float32 data (ch1 t1, ch2 t1, ...). */
  data: Float32Array;
  labels: string[];
  events?: { type: string; latency: number }[];
}

export async function writeMat73(path: string, spec: TestMat73): Promise<void> {
  await h5wasm.ready;
  const tmp = `${path}.h5tmp`;
  const f = new h5wasm.File(tmp, 'w');
  const eeg = f.create_group('EEG');
  eeg.create_attribute('MATLAB_class', 'struct');
  const refs = f.create_group('#refs#');
  let refCount = 0;
  const scalar = (group: typeof eeg, name: string, value: number) => {
    const d = group.create_dataset({ name, data: new Float64Array([value]), shape: [1, 1] });
    d.create_attribute('MATLAB_class', 'double');
  };
  const charRef = (text: string) => {
    const d = refs.create_dataset({ name: `r${refCount++}`, data: Uint16Array.from(text, (c) => c.charCodeAt(0)), shape: [text.length, 1] });
    d.create_attribute('MATLAB_class', 'char');
    return d.create_reference();
  };
  const numRef = (value: number) => {
    const d = refs.create_dataset({ name: `r${refCount++}`, data: new Float64Array([value]), shape: [1, 1] });
    d.create_attribute('MATLAB_class', 'double');
    return d.create_reference();
  };
  scalar(eeg, 'nbchan', spec.nbchan);
  scalar(eeg, 'pnts', spec.pnts);
  scalar(eeg, 'trials', 1);
  scalar(eeg, 'srate', spec.srate);
  // MATLAB writes the nbchan x pnts matrix transposed: HDF5 shape [pnts, nbchan], so rows are time points.
  const data = eeg.create_dataset({ name: 'data', data: spec.data, shape: [spec.pnts, spec.nbchan] });
  data.create_attribute('MATLAB_class', 'single');
  const chanlocs = eeg.create_group('chanlocs');
  chanlocs.create_attribute('MATLAB_class', 'struct');
  chanlocs.create_dataset({ name: 'labels', data: spec.labels.map(charRef), shape: [spec.labels.length, 1] });
  if (spec.events?.length) {
    const event = eeg.create_group('event');
    event.create_attribute('MATLAB_class', 'struct');
    event.create_dataset({ name: 'type', data: spec.events.map((e) => charRef(e.type)), shape: [spec.events.length, 1] });
    event.create_dataset({ name: 'latency', data: spec.events.map((e) => numRef(e.latency)), shape: [spec.events.length, 1] });
  }
  f.close();
  const header = Buffer.alloc(512, 0x20);
  header.write('MATLAB 7.3 MAT-file, Platform: nds tests, HDF5 schema 1.00 .');
  await writeFile(path, Buffer.concat([header, await readFile(tmp)]));
  await rm(tmp);
}
