/**
 * The `.gitattributes` that `nds datasets upload` commits: git itself (`git check-attr`) must find the lfs
 * filter on every pointer and on no plain blob, whatever characters the paths hold.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isPlainBlob, lfsAttributes } from '../../src/cli/dataset-git.js';

function filtersOf(attributes: string, paths: string[]): Map<string, string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-attrs-'));
  try {
    execFileSync('git', ['init', '-q', dir]);
    writeFileSync(path.join(dir, '.gitattributes'), attributes);
    const out = execFileSync('git', ['-C', dir, 'check-attr', '-z', '--stdin', 'filter'], { input: paths.join('\0') + '\0', encoding: 'utf8' });
    const parts = out.split('\0');
    const found = new Map<string, string>();
    for (let i = 0; i + 2 < parts.length; i += 3) found.set(parts[i]!, parts[i + 2]!);
    return found;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('lfsAttributes', () => {
  it('marks every pointer and no plain blob, for odd paths too', () => {
    const files = [
      { path: 'sub-01/eeg/sub-01_task-rest_eeg.edf', size: 5_000_000 },
      { path: 'sub-01/eeg/sub-01_task-rest_eeg.EDF', size: 10 },
      { path: 'sub-01/eeg/sub-01_task-rest_eeg.vhdr', size: 300 },
      { path: 'sub-01/eeg/sub-01_task-rest_eeg.eeg', size: 9 },
      { path: 'dataset_description.json', size: 100 },
      { path: 'derivatives/big table.json', size: 3 << 20 },
      { path: 'sourcedata/run [1]*?!#.dat', size: 20 },
      { path: 'sourcedata/raw', size: 20 },
      { path: 'README', size: 20 },
      // Large text is a pointer beside small text of its extension: one line naming it alone.
      { path: 'sourcedata/notes [1]*?!#.txt', size: 2 << 20 },
      { path: 'sourcedata/notes [1]x.txt', size: 20 },
      { path: 'sourcedata/notes 1.txt', size: 20 },
    ];
    const attributes = lfsAttributes(files);
    assert.match(attributes, /^\*\.edf filter=lfs diff=lfs merge=lfs -text$/m);
    const found = filtersOf(attributes, files.map((f) => f.path));
    for (const f of files) assert.equal(found.get(f.path), isPlainBlob(f) ? 'unspecified' : 'lfs', f.path);
    // A new file of an all-pointer extension is taken by git-lfs too; small JSON stays a blob.
    const later = filtersOf(attributes, ['sub-02/eeg/new.edf', 'sub-02/eeg/new.json']);
    assert.equal(later.get('sub-02/eeg/new.edf'), 'lfs');
    assert.equal(later.get('sub-02/eeg/new.json'), 'unspecified');
  });

  it('is empty when there is no pointer', () => {
    assert.equal(lfsAttributes([{ path: 'README', size: 10 }]), '');
  });
});
