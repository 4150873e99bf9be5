/** The BIDS inheritance principle: which sidecars apply to a data file. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applicableFiles, folderLister, type DirectoryLister } from '../../../src/formats/bids/sidecar-files.js';
import { fixturesDir } from '../support/fixtures.js';
import { join } from 'node:path';

const tree: Record<string, string[]> = {
  '': ['task-rest_eeg.json', 'task-other_eeg.json', 'task-rest_events.tsv'],
  'sub-01': ['sub-01_task-rest_eeg.json', 'sub-01_task-rest_events.tsv'],
  'sub-01/ses-1': [],
  'sub-01/ses-1/eeg': ['sub-01_ses-1_task-rest_run-1_eeg.edf', 'sub-01_ses-1_task-rest_channels.tsv', 'sub-01_ses-1_task-rest_run-2_channels.tsv', 'sub-01_ses-1_task-rest_run-1_channels.tsv'],
};
const list: DirectoryLister = async (dir) => tree[dir] ?? [];
const data = 'sub-01/ses-1/eeg/sub-01_ses-1_task-rest_run-1_eeg.edf';

describe('applicableFiles', () => {
  it('merges JSON from the top down and skips files with other entity values', async () => {
    assert.deepEqual(await applicableFiles(list, data, 'eeg', '.json'), ['task-rest_eeg.json', 'sub-01/sub-01_task-rest_eeg.json']);
  });

  it('ranks the lowest, most specific TSV last', async () => {
    const found = await applicableFiles(list, data, 'channels', '.tsv');
    assert.equal(found.at(-1), 'sub-01/ses-1/eeg/sub-01_ses-1_task-rest_run-1_channels.tsv');
    assert.ok(!found.includes('sub-01/ses-1/eeg/sub-01_ses-1_task-rest_run-2_channels.tsv'));
  });

  it('inherits an events file from a higher level', async () => {
    assert.equal((await applicableFiles(list, data, 'events', '.tsv')).at(-1), 'sub-01/sub-01_task-rest_events.tsv');
  });

  it('applies the root sidecar of eeg_matchingpennies to its recording', async () => {
    const root = join(fixturesDir, 'bids/eeg_matchingpennies');
    const found = await applicableFiles(folderLister(root), 'sub-05/eeg/sub-05_task-matchingpennies_eeg.vhdr', 'eeg', '.json');
    assert.deepEqual(found, ['task-matchingpennies_eeg.json']);
  });
});
