/**
 * Channel counts: a recording of up to 16,384 channels is converted, in time linear in its channels; a header
 * that declares more (a BrainVision header may declare millions in a few megabytes of text, an EEGLAB .set any
 * nbchan) fails with `unsupported_format` before anything is allocated for them.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertBidsTreeToFolder } from '../../src/formats/convert-to-folder.js';
import { EeglabReader } from '../../src/formats/readers/eeglab-reader.js';
import { writeStore } from '../../src/formats/zarr/store-writer.js';
import { isConversionError } from '../../src/formats/conversion-errors.js';
import { MAX_CHANNELS } from '../../src/formats/recording-limits.js';
import type { ChannelInfo, RecordingReader } from '../../src/formats/types.js';
import { writeMat5 } from './support/mat5-writer.js';
import { NullSink } from './support/null-sink.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-channels-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

/** A BIDS tree of one BrainVision recording of `n` channels and one sample. */
async function brainVisionTree(name: string, n: number): Promise<string> {
  const root = join(dir, name);
  const eeg = join(root, 'sub-01', 'eeg');
  await mkdir(eeg, { recursive: true });
  await writeFile(join(root, 'dataset_description.json'), '{"Name": "t", "BIDSVersion": "1.9.0"}');
  const lines = [
    'Brain Vision Data Exchange Header File Version 1.0',
    '[Common Infos]',
    'DataFile=sub-01_task-x_eeg.eeg',
    'DataFormat=BINARY',
    'DataOrientation=MULTIPLEXED',
    `NumberOfChannels=${n}`,
    'SamplingInterval=2000',
    '[Binary Infos]',
    'BinaryFormat=INT_16',
    '[Channel Infos]',
  ];
  for (let i = 1; i <= n; i++) lines.push(`Ch${i}=c${i},,0.1,uV`);
  await writeFile(join(eeg, 'sub-01_task-x_eeg.vhdr'), lines.join('\n'));
  await writeFile(join(eeg, 'sub-01_task-x_eeg.eeg'), Buffer.alloc(n * 2));
  return root;
}

describe('channel counts', () => {
  it(`converts a BrainVision recording of ${MAX_CHANNELS.toLocaleString('en')} channels`, async () => {
    const result = await convertBidsTreeToFolder(await brainVisionTree('bound', MAX_CHANNELS), join(dir, 'out-bound'));
    assert.deepEqual(result.failures, []);
    assert.equal(result.stores[0]!.summary.groups[0]!.n_channels, MAX_CHANNELS);
  });

  it('fails a BrainVision header of 60,000 channels (1.6 MB) with unsupported_format within 3 s', async () => {
    // Converted, it blocked the event loop of `nds serve` for about a minute (200,000 channels: over ten).
    const root = await brainVisionTree('many', 60_000);
    const started = performance.now();
    const result = await convertBidsTreeToFolder(root, join(dir, 'out-many'));
    const ms = performance.now() - started;
    assert.deepEqual(result.stores, []);
    assert.deepEqual(
      result.failures.map((f) => [f.code, f.reason]),
      [['unsupported_format', 'sub-01_task-x_eeg.vhdr has 60,000 channels; nds converts recordings of up to 16,384 channels.']],
    );
    assert.ok(ms < 3000, `the conversion took ${Math.round(ms)} ms`);
  });

  it('fails an EEGLAB .set of nbchan 60,000 with unsupported_format', async () => {
    const path = join(dir, 'many.set');
    await writeFile(path, writeMat5({ EEG: { struct: [{ nbchan: { double: [60_000] }, pnts: { double: [1] }, trials: { double: [1] }, srate: { double: [250] }, data: 'many.fdt' }] } }));
    await writeFile(join(dir, 'many.fdt'), new Uint8Array(60_000 * 4));
    await assert.rejects(EeglabReader.open(path), (err) => isConversionError(err, 'unsupported_format') && err.message === 'many.set has 60,000 channels; nds converts recordings of up to 16,384 channels.');
  });

  it('writes a store of 30,000 channels in well under 2 s (channels are grouped by rate in linear time)', async () => {
    // The readers refuse this many, but the writer must not be quadratic in them: copying each rate's list on
    // every channel took 7.5 s for 30,000 channels, a minute for 60,000.
    const channels: ChannelInfo[] = Array.from({ length: 30_000 }, (_, i) => ({ label: `c${i}`, type: 'EEG', unit: 'uV', rate: 500, nSamples: 1, scale: 1, offset: 0 }));
    const reader: RecordingReader = {
      format: 'brainvision',
      sampleType: 'int16',
      channels,
      startTime: null,
      flags: [],
      files: ['many.vhdr'],
      async *blocks() {
        yield channels.map(() => new Int16Array(1));
      },
      annotations: () => [],
      segments: () => [{ storedStart: 0, onset: 0, duration: 1 / 500 }],
      digests: async () => [],
      close: async () => {},
    };
    const started = performance.now();
    const summary = await writeStore(reader, new NullSink(), { sourcePath: 'many.vhdr', files: [] });
    const ms = performance.now() - started;
    assert.equal(summary.groups[0]!.n_channels, 30_000);
    assert.ok(ms < 2000, `writing took ${Math.round(ms)} ms`);
  });
});
