/**
 * The paths a version's manifest may hold (`normalizeManifest`): plain relative paths that stay inside the
 * folder a client downloads into, never into a git folder there, and that are distinct files on every file
 * system a user may download to (macOS and Windows ignore case; macOS also Unicode form).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeManifest, pathConflicts, unsafePathReason } from '../../src/datasets/manifest.js';

const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const entry = (path: string) => ({ path, size: 0, sha256: EMPTY });

describe('manifest paths', () => {
  it('refuses a path into a .git folder, however Windows or git spells it', () => {
    for (const path of ['.git/config', 'sub-01/.git/hooks/post-checkout', '.GIT/config', '.git./config', '.git /config', 'git~1/config', 'GIT~2/x']) {
      assert.equal(unsafePathReason(path), 'inside a .git folder', path);
      assert.throws(() => normalizeManifest([entry(path)]), (err: Error & { details?: string[] }) => /inside a \.git folder/.test(err.details?.join() ?? ''), path);
    }
    for (const path of ['.gitattributes', '.gitignore', 'sub-01/.gitkeep', 'derivatives/git/x.tsv', 'a.git/x']) assert.equal(unsafePathReason(path), undefined, path);
  });

  it('refuses paths that are one file on macOS or Windows, and a file that is also a folder', () => {
    const refused = (paths: string[], why: RegExp) =>
      assert.throws(() => normalizeManifest(paths.map(entry)), (err: Error & { details?: string[] }) => why.test(err.details?.join('\n') ?? ''), paths.join(', '));
    refused(['sub-01/eeg/A.tsv', 'sub-01/eeg/a.tsv'], /differs from .* only in case or Unicode form/);
    refused(['SUB-01/x.json', 'sub-01/y.json', 'sub-01/X.json'], /"sub-01\/X.json": differs from "SUB-01\/x.json"/);
    refused(['caf\u00e9.json', 'cafe\u0301.json'], /only in case or Unicode form/);
    refused(['sub-01', 'sub-01/eeg/x.edf'], /"sub-01": a file, and the folder of "sub-01\/eeg\/x.edf"/);
    refused(['Sub-01/eeg', 'sub-01/eeg/x.edf'], /a file, and the folder of/);
    // Distinct on every file system: kept, sorted.
    const kept = normalizeManifest(['b/x.tsv', 'a/x.tsv', 'a/xy.tsv', 'a-b', 'a.b/c'].map(entry));
    assert.deepEqual(kept.map((e) => e.path), ['a-b', 'a.b/c', 'a/x.tsv', 'a/xy.tsv', 'b/x.tsv']);
  });

  it('finds the conflicts of a million paths in linear time', () => {
    const paths = Array.from({ length: 1_000_000 }, (_, i) => `sub-${i % 1000}/eeg/file-${i}.edf`);
    const started = performance.now();
    assert.deepEqual(pathConflicts(paths), []);
    assert.ok(performance.now() - started < 10_000);
  });
});
