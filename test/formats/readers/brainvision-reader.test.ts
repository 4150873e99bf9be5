/** BrainVision reading: the mne fixtures against their header text and raw bytes, and synthetic variants. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrainVisionReader } from '../../../src/formats/readers/brainvision-reader.js';
import { isConversionError } from '../../../src/formats/conversion-errors.js';
import { readAll } from '../support/read-all.js';
import { writeBrainVision } from '../support/brainvision-writer.js';
import { fixturesDir } from '../support/fixtures.js';

const bv = (name: string) => join(fixturesDir, 'mne-python/brainvision', name);
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-bv-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

const samples = [
  [1, -2, 3, -4, 5],
  [100, 200, -300, 400, -500],
  [-32768, 32767, 0, 1, -1],
];

describe('BrainVisionReader on the mne fixtures', () => {
  it('reads test.vhdr: 32 INT_16 channels at 1000 Hz, resolution 0.5, 7900 samples', async () => {
    const reader = await BrainVisionReader.open(bv('test.vhdr'));
    assert.equal(reader.sampleType, 'int16');
    assert.equal(reader.channels.length, 32);
    assert.ok(reader.channels.every((c) => c.rate === 1000 && c.nSamples === 7900 && c.scale === 0.5 && c.offset === 0));
    // Ch2 has an empty unit and Ch3 none: both mean µV; Ch27..32 keep the odd units as written.
    assert.deepEqual(reader.channels.slice(0, 3).map((c) => c.unit), ['µV', 'µV', 'µV']);
    assert.deepEqual(reader.channels.slice(26).map((c) => c.unit), ['BS', 'µS', 'ARU', 'uS', 'S', 'C']);
    assert.equal(reader.startTime, '2013-11-13T16:14:03.794232');
    const data = await readAll(reader);
    const raw = await readFile(bv('test.eeg'));
    // MULTIPLEXED INT_16: sample t of channel c is at (t*32 + c)*2.
    for (const [c, t] of [[0, 0], [1, 0], [31, 0], [5, 7899]] as const) assert.equal(data[c]![t], raw.readInt16LE((t * 32 + c) * 2));
    // Mk2=Stimulus,S253,487 is 1-based: onset (487-1)/1000.
    assert.deepEqual(reader.annotations()[0], { onset: 0.486, duration: 0, description: 'Stimulus/S253' });
    assert.equal(reader.annotations().length, 13);
    await reader.close();
  });

  it('reads the v2.0 header testv2.vhdr with its comment marker', async () => {
    const reader = await BrainVisionReader.open(bv('testv2.vhdr'));
    assert.equal(reader.header.version, '2.0');
    assert.equal(reader.channels.length, 32);
    assert.ok(reader.annotations().some((a) => a.description === 'Comment/comment using [square] brackets'));
    await reader.close();
  });
});

describe('BrainVisionReader on synthetic files', () => {
  for (const [format, orientation] of [['INT_16', 'VECTORIZED'], ['INT_32', 'MULTIPLEXED'], ['INT_32', 'VECTORIZED'], ['IEEE_FLOAT_32', 'MULTIPLEXED'], ['IEEE_FLOAT_32', 'VECTORIZED']] as const) {
    it(`reads ${format} ${orientation} samples unchanged`, async () => {
      const values = format === 'IEEE_FLOAT_32' ? samples.map((row) => row.map((v) => Math.fround(v * 0.37))) : format === 'INT_32' ? samples.map((row) => row.map((v) => v * 1000)) : samples;
      const path = await writeBrainVision({ dir, stem: `${format}-${orientation}`, format, orientation, samples: values, labels: ['A', 'B', 'C'], markers: ['Stimulus,S  1,3,1,0'] });
      const reader = await BrainVisionReader.open(path);
      assert.equal(reader.sampleType, { INT_16: 'int16', INT_32: 'int32', IEEE_FLOAT_32: 'float32' }[format]);
      assert.deepEqual(await readAll(reader), values);
      assert.equal(reader.channels[0]!.rate, 500);
      assert.deepEqual(reader.annotations(), [{ onset: 0.004, duration: 0, description: 'Stimulus/S  1' }]);
      assert.equal(reader.startTime, '2020-01-02T03:04:05.123456');
      await reader.close();
    });
  }

  it('decodes a latin-1 header without a Codepage line', async () => {
    const path = await writeBrainVision({ dir, stem: 'latin', format: 'INT_16', orientation: 'MULTIPLEXED', samples, labels: ['Fpü', 'Cz,1', 'Oz'], units: ['µV', 'µV', 'µV'], codepage: 'latin-1' });
    const reader = await BrainVisionReader.open(path);
    assert.deepEqual(reader.channels.map((c) => c.label), ['Fpü', 'Cz,1', 'Oz']);
    assert.equal(reader.channels[0]!.unit, 'µV');
    await reader.close();
  });

  it('resolves stale DataFile and MarkerFile names by the header stem', async () => {
    const path = await writeBrainVision({ dir, stem: 'renamed', format: 'INT_16', orientation: 'MULTIPLEXED', samples, labels: ['A', 'B', 'C'], dataFileName: 'old_name.eeg', markerFileName: 'old_name.vmrk' });
    const reader = await BrainVisionReader.open(path);
    assert.ok(reader.flags.includes('brainvision_header_recovered'));
    assert.equal(reader.files.length, 3);
    assert.deepEqual(await readAll(reader), samples);
    await reader.close();
  });

  it('refuses a segmented export with not_continuous', async () => {
    const path = await writeBrainVision({ dir, stem: 'segmented', format: 'INT_16', orientation: 'MULTIPLEXED', samples, labels: ['A', 'B', 'C'] });
    const text = (await readFile(path, 'utf8')).replace('DataFormat=BINARY', 'DataFormat=BINARY\r\nSegmentationType=MARKERBASED');
    await writeFile(path, text);
    await assert.rejects(BrainVisionReader.open(path), (err) => isConversionError(err, 'not_continuous'));
  });

  it('refuses a header whose channel lines do not match NumberOfChannels', async () => {
    const path = await writeBrainVision({ dir, stem: 'count', format: 'INT_16', orientation: 'MULTIPLEXED', samples, labels: ['A', 'B', 'C'] });
    await writeFile(path, (await readFile(path, 'utf8')).replace('NumberOfChannels=3', 'NumberOfChannels=4'));
    await assert.rejects(BrainVisionReader.open(path), (err) => isConversionError(err, 'channel_count_mismatch'));
  });

  it('reports the 0-byte data file of eeg_matchingpennies as an empty recording', async () => {
    const path = join(fixturesDir, 'bids/eeg_matchingpennies/sub-05/eeg/sub-05_task-matchingpennies_eeg.vhdr');
    await assert.rejects(BrainVisionReader.open(path), (err) => isConversionError(err, 'empty_recording') && /0 bytes/.test(err.message));
  });
});
