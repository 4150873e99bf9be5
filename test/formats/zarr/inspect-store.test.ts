/** inspectStore: what `nds inspect` prints, read back through zarrita. */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { convertFileToFolder } from '../../../src/formats/convert-to-folder.js';
import { inspectStore } from '../../../src/formats/zarr/inspect-store.js';
import { fixturesDir } from '../support/fixtures.js';

const out = await mkdtemp(join(tmpdir(), 'nds-inspect-'));
after(async () => rm(out, { recursive: true, force: true }));

describe('inspectStore', () => {
  it('describes groups, channels, duration and events of test.vhdr', async () => {
    await convertFileToFolder(join(fixturesDir, 'mne-python/brainvision/test.vhdr'), out);
    const d = await inspectStore(join(out, 'test.zarr'));
    assert.equal(d.format, 'nds-zarr');
    assert.equal(d.recording['duration_s'], 7.9);
    assert.deepEqual(d.groups.map((g) => [g.name, g.n_channels, g.n_samples, g.dtype]), [['eeg_1000hz', 32, 7900, 'int16']]);
    assert.deepEqual(d.groups[0]!.channels[0], { label: 'FP1', type: 'EEG', unit: 'µV', status: 'n/a' });
    assert.equal(d.n_events, 13);
    assert.deepEqual(d.events[0], { onset: 0.486, duration: 0, label: 'Stimulus/S253' });
  });

  it('refuses a folder that is not an nds-zarr store', async () => {
    await assert.rejects(inspectStore(join(out, 'nothing.zarr')));
  });
});
