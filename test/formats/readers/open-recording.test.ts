/**
 * Malformed inputs, per format: truncated, zero-byte, header-corrupted and random-byte files each fail
 * with their failure code and a sentence, within a second, through the whole conversion.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRecording } from '../../../src/formats/readers/open-recording.js';
import { writeStore } from '../../../src/formats/zarr/store-writer.js';
import { isConversionError, type FailureCode } from '../../../src/formats/conversion-errors.js';
import { NullSink } from '../support/null-sink.js';
import { writeEdf } from '../support/edf-writer.js';
import { writeBrainVision } from '../support/brainvision-writer.js';
import { writeMat5 } from '../support/mat5-writer.js';
import { writeMat73 } from '../support/mat73-writer.js';
import { fixturesDir } from '../support/fixtures.js';

let dir: string;
let n = 0;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-bad-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

/** Deterministic pseudo-random bytes (mulberry32). */
export function randomBytes(length: number, seed: number): Uint8Array {
  let a = seed >>> 0;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    out[i] = ((t ^ (t >>> 14)) >>> 0) & 0xff;
  }
  return out;
}

function patch(bytes: Uint8Array, at: number, text: string): Uint8Array {
  const copy = bytes.slice();
  copy.set(new TextEncoder().encode(text), at);
  return copy;
}

async function convert(path: string): Promise<void> {
  const reader = await openRecording(path);
  try {
    await writeStore(reader, new NullSink(), { sourcePath: path, files: [] });
  } finally {
    await reader.close();
  }
}

type Case = [name: string, code: FailureCode, make: () => Promise<string>];

async function file(ext: string, bytes: Uint8Array | string): Promise<string> {
  const path = join(dir, `case${n++}${ext}`);
  await writeFile(path, bytes);
  return path;
}

const edfBytes = () => readFile(join(fixturesDir, 'mne-python/edf/test_uneven_samp.edf'));
const bdfBytes = () => readFile(join(fixturesDir, 'mne-python/edf/test.bdf'));
const vhdr = async (edit: (text: string) => string, eeg?: Uint8Array) => {
  const stem = `bv${n++}`;
  const path = await writeBrainVision({ dir, stem, format: 'INT_16', orientation: 'MULTIPLEXED', samples: [[1, 2, 3, 4], [5, 6, 7, 8]], labels: ['A', 'B'], dataPoints: true });
  await writeFile(path, edit(await readFile(path, 'latin1')), 'latin1');
  if (eeg) await writeFile(join(dir, `${stem}.eeg`), eeg);
  return path;
};
const setV5 = (data: unknown = { single: new Float32Array(8), dims: [2, 4] }) =>
  writeMat5({ EEG: { struct: [{ nbchan: { double: [2] }, pnts: { double: [4] }, trials: { double: [1] }, srate: { double: [100] }, data: data as never }] } });

const cases: Case[] = [
  ['EDF: zero bytes', 'empty_recording', () => file('.edf', new Uint8Array(0))],
  ['EDF: cut inside the fixed header', 'corrupt_or_truncated', async () => file('.edf', (await edfBytes()).subarray(0, 100))],
  ['EDF: cut inside the signal headers', 'corrupt_or_truncated', async () => file('.edf', (await edfBytes()).subarray(0, 300))],
  ['EDF: cut in the middle of the data', 'corrupt_or_truncated', async () => { const b = await edfBytes(); return file('.edf', b.subarray(0, 768 + (b.length - 768) / 2)); }],
  ['EDF: signal count is not a number', 'corrupt_or_truncated', async () => file('.edf', patch(await edfBytes(), 252, 'abcd'))],
  ['EDF: header size disagrees with the signal count', 'corrupt_or_truncated', async () => file('.edf', patch(await edfBytes(), 184, '512     '))],
  ['EDF: record duration is not a number', 'corrupt_or_truncated', async () => file('.edf', patch(await edfBytes(), 244, 'ten     '))],
  ['EDF: digital minimum above maximum', 'corrupt_or_truncated', async () => file('.edf', patch(await edfBytes(), 256 + 120 * 2, '32767   -32768  '))],
  ['EDF: record count far beyond the file', 'corrupt_or_truncated', async () => file('.edf', patch(await edfBytes(), 236, '99999999'))],
  ['EDF: absurd signal count', 'corrupt_or_truncated', async () => file('.edf', patch(await edfBytes(), 184, '25600256').slice(0, 768))],
  ['EDF: only an annotation signal', 'empty_recording', async () => file('.edf', writeEdf({ plus: 'C', recordDuration: 1, records: 2, signals: [] }))],
  ['EDF: random bytes', 'corrupt_or_truncated', () => file('.edf', randomBytes(4096, 1))],
  ['BDF: zero bytes', 'empty_recording', () => file('.bdf', new Uint8Array(0))],
  ['BDF: cut in the middle of the data', 'corrupt_or_truncated', async () => file('.bdf', (await bdfBytes()).subarray(0, 100000))],
  ['BDF: cut inside the signal headers', 'corrupt_or_truncated', async () => file('.bdf', (await bdfBytes()).subarray(0, 5000))],
  ['BDF: digital range beyond 24 bits', 'corrupt_or_truncated', async () => file('.bdf', patch(await bdfBytes(), 256 + 128 * 74, '99999999'))],
  ['BDF: random bytes', 'corrupt_or_truncated', () => file('.bdf', randomBytes(20000, 2))],
  ['BrainVision: zero-byte header', 'empty_recording', () => file('.vhdr', new Uint8Array(0))],
  ['BrainVision: header cut after its first lines', 'corrupt_or_truncated', async () => vhdr((t) => t.slice(0, 80))],
  ['BrainVision: sampling interval is not a number', 'corrupt_or_truncated', async () => vhdr((t) => t.replace(/SamplingInterval=\d+/, 'SamplingInterval=fast'))],
  ['BrainVision: data shorter than DataPoints', 'corrupt_or_truncated', async () => vhdr((t) => t, new Uint8Array(6))],
  ['BrainVision: zero-byte data file', 'empty_recording', async () => vhdr((t) => t, new Uint8Array(0))],
  ['BrainVision: data file missing', 'file_read_error', async () => vhdr((t) => t.replace(/DataFile=.*/, 'DataFile=nowhere.eeg').replace(/^/, ''), undefined).then(async (p) => { await rm(p.replace('.vhdr', '.eeg')); return p; })],
  ['BrainVision: ASCII data', 'unsupported_format', async () => vhdr((t) => t.replace('DataFormat=BINARY', 'DataFormat=ASCII'))],
  ['BrainVision: UINT_16 samples', 'unsupported_format', async () => vhdr((t) => t.replace('BinaryFormat=INT_16', 'BinaryFormat=UINT_16'))],
  ['BrainVision: random bytes', 'corrupt_or_truncated', () => file('.vhdr', randomBytes(2000, 3))],
  ['EEGLAB: zero bytes', 'empty_recording', () => file('.set', new Uint8Array(0))],
  ['EEGLAB: MAT v5 cut in the middle', 'corrupt_or_truncated', async () => { const b = setV5(); return file('.set', b.subarray(0, 128 + (b.length - 128) / 2)); }],
  ['EEGLAB: MAT header text corrupted', 'corrupt_or_truncated', async () => file('.set', patch(setV5(), 0, 'MATRIX 9.9'))],
  ['EEGLAB: data matrix of the wrong size', 'corrupt_or_truncated', async () => file('.set', setV5({ single: new Float32Array(6), dims: [2, 3] }))],
  ['EEGLAB: .fdt missing', 'file_read_error', async () => file('.set', setV5('gone.fdt'))],
  ['EEGLAB: MAT v7.3 cut in the middle', 'corrupt_or_truncated', async () => {
    const path = join(dir, `v73-${n++}.set`);
    await writeMat73(path, { nbchan: 2, pnts: 4, srate: 100, data: new Float32Array(8), labels: ['A', 'B'] });
    const b = await readFile(path);
    await writeFile(path, b.subarray(0, Math.floor(b.length / 2)));
    return path;
  }],
  ['EEGLAB: random bytes', 'corrupt_or_truncated', () => file('.set', randomBytes(3000, 4))],
  ['unknown extension', 'unsupported_format', async () => { const p = join(dir, 'x.gdf'); await copyFile(join(fixturesDir, 'mne-python/edf/test.edf'), p); return p; }],
];

describe('malformed files', () => {
  // The first conversion of a process loads the readers and codecs (and compiles their WebAssembly): a cost
  // paid once, not per file, so it stays out of the per-file second.
  before(async () => {
    await convert(join(fixturesDir, 'mne-python/edf/test.edf'));
  });
  for (const [name, code, make] of cases) {
    it(`${name} → ${code}`, async () => {
      const path = await make();
      const started = performance.now();
      await assert.rejects(convert(path), (err) => {
        assert.ok(isConversionError(err), `not a conversion error: ${(err as Error)?.stack}`);
        assert.equal(err.code, code, err.message);
        assert.match(err.message, /^\S.{15,}[.)]$/s, 'a sentence');
        return true;
      });
      assert.ok(performance.now() - started < 1000, 'within a second');
    });
  }
});
