/**
 * A recording's sampling rate is finite and at most 1 MHz, whatever its header says: an EDF record duration
 * such as "1e-320" (a denormal, above 0) gave an infinite rate, written as `eeg_Infinityhz` with `rate: null`,
 * and a BrainVision SamplingInterval can do the same. Such a header fails with `corrupt_or_truncated`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EdfReader } from '../../../src/formats/readers/edf-reader.js';
import { BrainVisionReader } from '../../../src/formats/readers/brainvision-reader.js';
import { EeglabReader } from '../../../src/formats/readers/eeglab-reader.js';
import { convertBidsTreeToFolder } from '../../../src/formats/convert-to-folder.js';
import { isConversionError } from '../../../src/formats/conversion-errors.js';
import { writeEdf } from '../support/edf-writer.js';
import { writeBrainVision } from '../support/brainvision-writer.js';
import { writeMat5 } from '../support/mat5-writer.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-rate-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

/** An EDF of one signal of `samplesPerRecord` samples a record, its record duration field set to `duration`. */
async function edf(name: string, duration: string, samplesPerRecord = 4): Promise<string> {
  const bytes = writeEdf({ recordDuration: 1, records: 2, signals: [{ label: 'Fz', samplesPerRecord }] });
  bytes.set(new TextEncoder().encode(duration.padEnd(8)), 244);
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
}

describe('sampling rates', () => {
  it('fails an EDF recording whose record duration is a denormal (1e-320 s) with corrupt_or_truncated, in a BIDS tree too', async () => {
    const root = join(dir, 'bids');
    await mkdir(join(root, 'sub-01', 'eeg'), { recursive: true });
    const path = await edf('denormal.edf', '1e-320');
    await copyFile(path, join(root, 'sub-01', 'eeg', 'sub-01_task-x_eeg.edf'));
    await assert.rejects(EdfReader.open(path), (err) =>
      isConversionError(err, 'corrupt_or_truncated') &&
      err.message === 'denormal.edf has a corrupt header: the data record duration ("1e-320") is shorter than 1 µs although the file has signal channels.');
    const result = await convertBidsTreeToFolder(root, join(dir, 'out'));
    assert.deepEqual(result.stores, []);
    assert.deepEqual(result.failures.map((f) => f.code), ['corrupt_or_truncated']);
  });

  it('fails an EDF recording of more than 1,000,000 samples a second; reads one of exactly that', async () => {
    await assert.rejects(EdfReader.open(await edf('fast.edf', '0.000001', 2)), (err) =>
      isConversionError(err, 'corrupt_or_truncated') &&
      err.message === 'fast.edf has a corrupt header: 2 samples of Fz in a data record of 0.000001 s means 2000000 samples per second; nds converts recordings of up to 1,000,000 samples per second.');
    const reader = await EdfReader.open(await edf('bound.edf', '0.000001', 1));
    assert.equal(reader.channels[0]!.rate, 1_000_000);
    await reader.close();
  });

  it('fails a BrainVision header whose SamplingInterval gives an infinite rate', async () => {
    const path = await writeBrainVision({ dir, stem: 'interval', format: 'INT_16', orientation: 'MULTIPLEXED', samples: [[1, 2]], labels: ['A'], intervalUs: 1e-320 });
    await assert.rejects(BrainVisionReader.open(path), (err) => isConversionError(err, 'corrupt_or_truncated') && /SamplingInterval=1e-320 \(µs\) means Infinity samples per second/.test(err.message));
  });

  it('fails an EEGLAB .set whose srate is above 1,000,000', async () => {
    const path = join(dir, 'srate.set');
    const data = { single: new Float32Array([1, 2]), dims: [1, 2] };
    await writeFile(path, writeMat5({ EEG: { struct: [{ nbchan: { double: [1] }, pnts: { double: [2] }, trials: { double: [1] }, srate: { double: [1e9] }, data }] } }));
    await assert.rejects(EeglabReader.open(path), (err) => isConversionError(err, 'corrupt_or_truncated') && /srate=1000000000 means 1000000000 samples per second/.test(err.message));
  });
});
