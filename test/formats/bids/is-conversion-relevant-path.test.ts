/** The push rule of CONTRACT §4, and the promise that it accepts every file the converter converts. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { isConversionRelevantPath } from '../../../src/formats/bids/is-conversion-relevant-path.js';
import { findRecordings } from '../../../src/formats/bids/find-recordings.js';
import { primaryExtensions } from '../../../src/formats/readers/open-recording.js';
import { fixturesDir } from '../support/fixtures.js';

describe('isConversionRelevantPath', () => {
  const cases: [string, boolean][] = [
    ['sub-01/eeg/sub-01_task-a_eeg.edf', true],
    ['sub-01/eeg/sub-01_task-a_eeg.EDF', true],
    ['sub-01/eeg/sub-01_task-a_eeg.vmrk', true],
    ['sub-01/ses-1/eeg/sub-01_ses-1_task-a_eeg.fdt', true],
    ['sub-01/meg/sub-01_task-a_meg.ds/BadChannels', true],
    ['sub-01/ieeg/sub-01_task-a_ieeg.mefd/ch1.timd/x.tdat', true],
    ['sub-01/eeg/sub-01_task-a_events.tsv', true],
    ['task-a_events.tsv', true],
    ['sub-01/eeg/sub-01_task-a_channels.tsv', false],
    ['sub-01/eeg/sub-01_task-a_eeg.json', false],
    ['README', false],
    ['derivatives/x/sub-01/eeg/sub-01_task-a_eeg.edf', false],
    ['sourcedata/raw.bdf', false],
    ['code/make_events.tsv', false],
    ['', false],
  ];
  for (const [path, expected] of cases) {
    it(`${expected ? 'accepts' : 'ignores'} ${path || '(empty)'}`, () => assert.equal(isConversionRelevantPath(path), expected));
  }

  it('accepts every primary and companion extension the readers open', () => {
    for (const ext of [...primaryExtensions, '.vmrk', '.eeg', '.fdt']) assert.ok(isConversionRelevantPath(`sub-01/eeg/sub-01_task-a_eeg${ext}`), ext);
  });

  it('accepts every recording the converter finds in the fixtures, with its companion files', async () => {
    const roots = await readdir(join(fixturesDir, 'bids'));
    let seen = 0;
    for (const name of roots) {
      for (const found of await findRecordings(join(fixturesDir, 'bids', name))) {
        assert.ok(isConversionRelevantPath(found.path), found.path);
        seen++;
      }
    }
    assert.ok(seen >= 4);
  });
});
