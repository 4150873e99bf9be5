/** EEGLAB `.set` reading: MAT v5 (inline data or `.fdt`) and MAT v7.3 (HDF5), written by the test's own writers. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EeglabReader } from '../../../src/formats/readers/eeglab-reader.js';
import { isConversionError } from '../../../src/formats/conversion-errors.js';
import { readAll } from '../support/read-all.js';
import { writeMat5, type MatIn } from '../support/mat5-writer.js';
import { writeMat73 } from '../support/mat73-writer.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-set-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

const nbchan = 3;
const pnts = 7;
/** Channel-major expectation; the file holds it sample-major (MATLAB column order of nbchan x pnts). */
const channels = [0, 1, 2].map((c) => Array.from({ length: pnts }, (_, t) => Math.fround((c + 1) * 10 + t * 0.5 - 3.3)));
const multiplexed = Float32Array.from({ length: nbchan * pnts }, (_, i) => channels[i % nbchan]![Math.floor(i / nbchan)]!);

function eeg(data: MatIn, extra: Record<string, MatIn> = {}): Record<string, MatIn> {
  return {
    EEG: {
      struct: [{
        nbchan: { double: [nbchan] }, pnts: { double: [pnts] }, trials: { double: [1] }, srate: { double: [250] }, xmin: { double: [0] },
        data,
        chanlocs: { struct: [{ labels: 'Fz', type: 'EEG' }, { labels: 'Cz', type: 'EEG' }, { labels: 'HEOG', type: 'eog' }] },
        event: { struct: [{ type: 'stim', latency: { double: [3] }, duration: { double: [0] } }, { type: { double: [42] } as MatIn, latency: { double: [5.5] }, duration: { double: [2] } }] },
        ...extra,
      }],
    },
  };
}

describe('EeglabReader', () => {
  it('reads a compressed MAT v5 .set with inline single data, labels, types and events', async () => {
    const path = join(dir, 'inline.set');
    await writeFile(path, writeMat5(eeg({ single: multiplexed, dims: [nbchan, pnts] })));
    const reader = await EeglabReader.open(path);
    assert.equal(reader.sampleType, 'float32');
    assert.deepEqual(reader.channels.map((c) => [c.label, c.type, c.rate, c.nSamples, c.scale, c.offset]), [
      ['Fz', 'EEG', 250, 7, 1, 0], ['Cz', 'EEG', 250, 7, 1, 0], ['HEOG', 'EOG', 250, 7, 1, 0],
    ]);
    assert.deepEqual(await readAll(reader), channels);
    // Latency is 1-based in samples: (3-1)/250 s; duration in samples.
    assert.deepEqual(reader.annotations(), [
      { onset: 2 / 250, duration: 0, description: 'stim' },
      { onset: 4.5 / 250, duration: 2 / 250, description: '42' },
    ]);
    await reader.close();
  });

  it('reads an uncompressed MAT v5 .set whose data names a stale .fdt file', async () => {
    const path = join(dir, 'sub-01_task-x_eeg.set');
    await writeFile(path, writeMat5(eeg('old_name.fdt'), false));
    await writeFile(join(dir, 'sub-01_task-x_eeg.fdt'), new Uint8Array(multiplexed.buffer));
    const reader = await EeglabReader.open(path);
    assert.ok(reader.flags.includes('eeglab_fdt_recovered'));
    assert.deepEqual(await readAll(reader), channels);
    await reader.close();
  });

  it('reads a MAT v7.3 (HDF5) .set through h5wasm', async () => {
    const path = join(dir, 'v73.set');
    await writeMat73(path, { nbchan, pnts, srate: 250, data: multiplexed, labels: ['Fz', 'Cz', 'HEOG'], events: [{ type: 'go', latency: 2 }] });
    const reader = await EeglabReader.open(path);
    assert.deepEqual(reader.channels.map((c) => c.label), ['Fz', 'Cz', 'HEOG']);
    assert.deepEqual(await readAll(reader), channels);
    assert.deepEqual(reader.annotations(), [{ onset: 1 / 250, duration: 0, description: 'go' }]);
    await reader.close();
  });

  it('refuses epoched data with not_continuous', async () => {
    const path = join(dir, 'epoched.set');
    await writeFile(path, writeMat5(eeg({ single: multiplexed, dims: [nbchan, pnts] }, { trials: { double: [3] } })));
    await assert.rejects(EeglabReader.open(path), (err) => isConversionError(err, 'not_continuous'));
  });

  it('refuses an .fdt whose size fits another channel count with channel_count_mismatch', async () => {
    const path = join(dir, 'mismatch.set');
    await writeFile(path, writeMat5(eeg('mismatch.fdt')));
    await writeFile(join(dir, 'mismatch.fdt'), new Uint8Array(4 * pnts * 4));
    await assert.rejects(EeglabReader.open(path), (err) => isConversionError(err, 'channel_count_mismatch'));
  });
});
