/** The BIDS check an upload runs before sending: the real fixture trees pass; each kind of fault is named. */
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { bidsFolderOnDisk, checkBidsFolder, type BidsFolderSource } from '../../../src/formats/bids/check-bids-folder.js';
import { fixturesDir } from '../support/fixtures.js';
import { writeEdf } from '../support/edf-writer.js';

function onDisk(root: string): BidsFolderSource {
  const files = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const abs = path.join(e.parentPath, e.name);
      return { path: path.relative(root, abs).split(path.sep).join('/'), size: statSync(abs).size };
    });
  return bidsFolderOnDisk(root, files);
}

/** A folder in memory: path → bytes. */
function inMemory(entries: Record<string, string | Uint8Array>): BidsFolderSource {
  const bytes = new Map(Object.entries(entries).map(([p, v]) => [p, typeof v === 'string' ? new TextEncoder().encode(v) : v]));
  return {
    files: [...bytes].map(([p, b]) => ({ path: p, size: b.length })),
    read: async (p, length) => bytes.get(p)!.subarray(0, length),
  };
}

const description = JSON.stringify({ Name: 'Test', BIDSVersion: '1.9.0' });
const edf = writeEdf({ recordDuration: 1, records: 4, signals: [{ label: 'Cz', samplesPerRecord: 16 }] });

describe('the BIDS check of an upload', () => {
  it('names the 0-byte data file of eeg_matchingpennies (a placeholder in the published tree), and nothing else', async () => {
    const check = await checkBidsFolder(onDisk(path.join(fixturesDir, 'bids', 'eeg_matchingpennies')));
    assert.deepEqual(check.errors, [{ path: 'sub-05/eeg/sub-05_task-matchingpennies_eeg.eeg', message: 'is empty (0 bytes): the recording has no samples' }]);
  });

  for (const name of ['emg_CustomBipolar', 'emg_ConcurrentIndependentUnits']) {
    it(`passes the real dataset ${name} without errors`, async () => {
      const check = await checkBidsFolder(onDisk(path.join(fixturesDir, 'bids', name)));
      assert.deepEqual(check.errors, []);
      assert.ok(check.recordings.length >= 1);
    });
  }

  it('reads a folder named relative to the working directory, as `nds datasets upload ./my-study` names it', async () => {
    const parent = path.join(fixturesDir, 'bids');
    const cwd = process.cwd();
    process.chdir(parent);
    try {
      const check = await checkBidsFolder(onDisk('./emg_CustomBipolar'));
      assert.deepEqual(check.errors, []);
      assert.ok(check.recordings.length >= 1);
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses a folder with no dataset_description.json', async () => {
    const check = await checkBidsFolder(inMemory({ 'notes.txt': 'hello' }));
    assert.match(check.errors.map((e) => e.message).join('\n'), /no dataset_description\.json/);
  });

  it('refuses a description that is not JSON or lacks Name and BIDSVersion', async () => {
    const bad = await checkBidsFolder(inMemory({ 'dataset_description.json': '{"Name": ' }));
    assert.match(bad.errors[0]!.message, /not valid JSON/);
    const partial = await checkBidsFolder(inMemory({ 'dataset_description.json': '{"Name": "x"}' }));
    assert.deepEqual(partial.errors.map((e) => e.message), ['has no BIDSVersion (BIDS requires it)']);
  });

  it('names a data file whose name breaks the BIDS rules', async () => {
    const check = await checkBidsFolder(inMemory({ 'dataset_description.json': description, 'sub-01/eeg/recording1.edf': edf, 'sub-01/eeg/sub-02_task-x_eeg.edf': edf, 'sub-01/eeg/sub-01_eeg.edf': edf }));
    const byPath = new Map(check.errors.map((e) => [e.path, e.message]));
    assert.match(byPath.get('sub-01/eeg/recording1.edf')!, /not a BIDS file name/);
    assert.match(byPath.get('sub-01/eeg/sub-02_task-x_eeg.edf')!, /must start with sub-01/);
    assert.match(byPath.get('sub-01/eeg/sub-01_eeg.edf')!, /no task-<label>/);
  });

  it('wants the sidecar, and the companions of BrainVision and EEGLAB files', async () => {
    const vhdr = 'Brain Vision Data Exchange Header File Version 1.0\n[Common Infos]\nDataFile=sub-01_task-x_eeg.eeg\nMarkerFile=sub-01_task-x_eeg.vmrk\nDataFormat=BINARY\nDataOrientation=MULTIPLEXED\nNumberOfChannels=1\nSamplingInterval=1000\n[Binary Infos]\nBinaryFormat=INT_16\n[Channel Infos]\nCh1=Cz,,1,µV\n';
    const check = await checkBidsFolder(inMemory({
      'dataset_description.json': description,
      'sub-01/eeg/sub-01_task-x_eeg.vhdr': vhdr,
      'sub-01/eeg/sub-01_task-x_eeg.eeg': new Uint8Array(0),
      'sub-01/eeg/sub-01_task-y_eeg.set': 'MATLAB 5.0 MAT-file ... datfile sub-01_task-y_eeg.fdt',
      'task-x_eeg.json': '{}',
    }));
    const messages = check.errors.map((e) => `${e.path}: ${e.message}`).join('\n');
    assert.match(messages, /sub-01_task-x_eeg\.eeg: is empty/);
    assert.match(messages, /sub-01_task-x_eeg\.vhdr: its marker file sub-01_task-x_eeg\.vmrk/);
    assert.match(messages, /sub-01_task-y_eeg\.set: has no eeg sidecar/);
    assert.match(messages, /sub-01_task-y_eeg\.set: its data file sub-01_task-y_eeg\.fdt is not in the folder/);
    assert.doesNotMatch(messages, /sub-01_task-x_eeg\.vhdr: has no eeg sidecar/, 'task-x_eeg.json at the top applies by inheritance');
  });

  it('catches a truncated EDF by its header', async () => {
    const check = await checkBidsFolder(inMemory({
      'dataset_description.json': description,
      'sub-01/eeg/sub-01_task-x_eeg.edf': edf.subarray(0, edf.length - 40),
      'sub-01/eeg/sub-01_task-x_eeg.json': '{}',
    }));
    assert.equal(check.errors.length, 1);
    assert.match(check.errors[0]!.message, /^is truncated: the header announces 4 data records/);
  });
});
