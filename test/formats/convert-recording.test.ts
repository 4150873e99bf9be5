/**
 * convertRecording records every source file with its SHA-256 (CONTRACT §4 `source.files`). Data files are
 * hashed as the conversion reads them; whatever the format and read pattern, each digest is sha256sum's.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { convertRecording } from '../../src/formats/convert-recording.js';
import type { StoreSink } from '../../src/formats/zarr/store-sink.js';
import { writeBrainVision } from './support/brainvision-writer.js';
import { writeEdf } from './support/edf-writer.js';
import { writeMat5 } from './support/mat5-writer.js';
import { writeMat73 } from './support/mat73-writer.js';
import { fixturesDir } from './support/fixtures.js';

const run = promisify(execFile);
let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-digest-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

/** Keeps only the root zarr.json. */
class RootSink implements StoreSink {
  root: { source: { files: { path: string; sha256: string }[] } } | undefined;
  async put(key: string, bytes: Uint8Array): Promise<void> {
    if (key === 'zarr.json') this.root = JSON.parse(new TextDecoder().decode(bytes)).attributes;
  }
}

async function recordedFiles(dataPath: string, bidsRoot?: string): Promise<{ path: string; sha256: string }[]> {
  const sink = new RootSink();
  await convertRecording({ dataPath, sink, ...(bidsRoot ? { bidsRoot, modality: 'emg' } : {}) });
  return sink.root!.source.files;
}

async function sha256sum(path: string): Promise<string> {
  return (await run('sha256sum', [path])).stdout.split(' ')[0]!;
}

async function assertDigests(files: { path: string; sha256: string }[], base: string, names: string[]): Promise<void> {
  assert.deepEqual(files.map((f) => f.path), names);
  for (const f of files) assert.equal(f.sha256, await sha256sum(join(base, f.path)), f.path);
}

describe('convertRecording source digests', () => {
  it('records sha256sum of an EDF+ and of a BDF', async () => {
    const base = join(fixturesDir, 'mne-python/edf');
    await assertDigests(await recordedFiles(join(base, 'test.edf')), base, ['test.edf']);
    await assertDigests(await recordedFiles(join(base, 'test.bdf')), base, ['test.bdf']);
  });

  it('records sha256sum of a BrainVision header, data and marker file, multiplexed and vectorized', async () => {
    const base = join(fixturesDir, 'mne-python/brainvision');
    await assertDigests(await recordedFiles(join(base, 'test.vhdr')), base, ['test.vhdr', 'test.eeg', 'test.vmrk']);
    // Vectorized data is read channel by channel, out of file order: the digest must still cover every byte.
    const samples = Array.from({ length: 3 }, (_, c) => Array.from({ length: 5000 }, (_, t) => ((t * 37 + c * 101) % 2000) - 1000));
    const vhdr = await writeBrainVision({ dir, stem: 'vec', format: 'INT_16', orientation: 'VECTORIZED', samples, labels: ['A', 'B', 'C'], markers: ['Stimulus,S  1,10,1,0'] });
    await assertDigests(await recordedFiles(vhdr), dir, ['vec.vhdr', 'vec.eeg', 'vec.vmrk']);
  });

  it('records sha256sum of an EEGLAB .set with its .fdt, and of a MAT v7.3 .set', async () => {
    const data = Float32Array.from({ length: 2 * 300 }, (_, i) => Math.sin(i));
    const struct = (d: unknown) => ({ EEG: { struct: [{ nbchan: { double: [2] }, pnts: { double: [300] }, trials: { double: [1] }, srate: { double: [100] }, data: d as never }] } });
    await writeFile(join(dir, 'split.set'), writeMat5(struct('split.fdt')));
    await writeFile(join(dir, 'split.fdt'), new Uint8Array(data.buffer));
    await assertDigests(await recordedFiles(join(dir, 'split.set')), dir, ['split.set', 'split.fdt']);
    await writeMat73(join(dir, 'v73.set'), { nbchan: 2, pnts: 300, srate: 100, data, labels: ['A', 'B'], events: [] });
    await assertDigests(await recordedFiles(join(dir, 'v73.set')), dir, ['v73.set']);
  });

  it('records sha256sum of the data file and of each sidecar in a BIDS tree', async () => {
    const root = join(fixturesDir, 'bids/emg_CustomBipolar');
    const files = await recordedFiles(join(root, 'sub-01/emg/sub-01_task-holdWeight_emg.edf'), root);
    assert.equal(files[0]!.path, 'sub-01/emg/sub-01_task-holdWeight_emg.edf');
    assert.ok(files.length > 1, 'the sidecars are listed too');
    for (const f of files) assert.equal(f.sha256, await sha256sum(join(root, f.path)), f.path);
  });

  it('hashes a data file larger than one read batch', async () => {
    // 5 MiB of EDF records: the reader's 4 MiB batches and its prefetch of the next one both take part.
    const path = join(dir, 'big.edf');
    const records = 40;
    const nr = 32768;
    const samples = Array.from({ length: 2 * nr * records }, (_, i) => ((i * 7919) % 65536) - 32768);
    const bytes = writeEdf({ recordDuration: 1, records, signals: [0, 1].map((c) => ({ label: `C${c}`, samplesPerRecord: nr, samples: samples.slice(c * nr * records, (c + 1) * nr * records) })) });
    await writeFile(path, bytes);
    await assertDigests(await recordedFiles(path), dir, ['big.edf']);
  });
});
