/**
 * A clone of nds alone passes its own tests: no test, bench or script reads a file outside the repository
 * (the real recordings the tests use are in test/fixtures/). `.ci/run` also runs the suite from a clone with
 * nothing beside it; this test names the offending file and line at once.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function codeFiles(dir: string): string[] {
  return readdirSync(path.join(repo, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mjs|js|cjs|sh|py)$/.test(e.name) && !e.parentPath.includes('node_modules'))
    .map((e) => path.relative(repo, path.join(e.parentPath, e.name)));
}

describe('the repository stands alone', () => {
  it('has the fixtures the tests read, with their sources and licences', () => {
    for (const f of ['SOURCES.md', 'mne-python/LICENSE.txt', 'mne-python/edf/test.edf', 'mne-python/brainvision/test.eeg', 'bids/eeg_matchingpennies/LICENSE']) {
      assert.ok(existsSync(path.join(repo, 'test/fixtures', f)), `test/fixtures/${f}`);
    }
  });

  it('no test, bench or script names a path beside the repository', () => {
    // A relative path that climbs out of the repository to a folder beside it (two levels up from test/x/).
    const outside = /['"`]((\.\.\/)+)([A-Za-z_][\w.-]*)\//g;
    const found: string[] = [];
    for (const file of [...codeFiles('test'), ...codeFiles('bench'), ...codeFiles('scripts'), ...codeFiles('.ci'), ...codeFiles('clients')]) {
      readFileSync(path.join(repo, file), 'utf8').split('\n').forEach((line, i) => {
        for (const m of line.matchAll(outside)) {
          const target = path.resolve(repo, path.dirname(file), m[1]!, m[3]!);
          if (!target.startsWith(repo + path.sep)) found.push(`${file}:${i + 1}: ${m[0]}`);
        }
      });
    }
    assert.deepEqual(found, []);
  });
});
