/**
 * A text held in a file beside the test: the test fails when the text changes, naming the lines that did.
 * `UPDATE_SNAPSHOTS=1` writes the new text instead (then review the diff, as for code).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export function matchSnapshot(file: string, actual: string): void {
  if (process.env.UPDATE_SNAPSHOTS === '1' || !existsSync(file)) {
    if (!existsSync(file) && process.env.CI) assert.fail(`${file} is missing: run the test once with UPDATE_SNAPSHOTS=1 and commit it`);
    writeFileSync(file, actual);
    return;
  }
  const expected = readFileSync(file, 'utf8');
  if (actual === expected) return;
  const want = new Set(expected.split('\n'));
  const got = new Set(actual.split('\n'));
  const added = [...got].filter((l) => !want.has(l)).map((l) => `+ ${l}`);
  const removed = [...want].filter((l) => !got.has(l)).map((l) => `- ${l}`);
  assert.fail(`${file} differs (UPDATE_SNAPSHOTS=1 to accept):\n${[...removed, ...added].join('\n') || '(order changed)'}`);
}
