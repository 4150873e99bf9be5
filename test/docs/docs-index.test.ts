/**
 * The documentation a newcomer reads: every page of docs/ is linked from the README, and neither the docs nor
 * the code cite documents that are not in the repository (a section sign is how such citations looked).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p: string) => readFileSync(path.join(repo, p), 'utf8');

function filesUnder(dir: string, ext: RegExp): string[] {
  return readdirSync(path.join(repo, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && ext.test(e.name))
    .map((e) => path.relative(repo, path.join(e.parentPath, e.name)));
}

describe('the documentation', () => {
  it('links every page of docs/ from the README', () => {
    const readme = read('README.md');
    const pages = readdirSync(path.join(repo, 'docs')).filter((f) => f.endsWith('.md'));
    assert.deepEqual(pages.filter((p) => !readme.includes(`docs/${p}`)), []);
    assert.ok(readme.includes('docs/decisions/'));
  });

  it('cites no document outside the repository', () => {
    const cited = [...filesUnder('docs', /\.md$/), 'README.md', ...filesUnder('src', /\.ts$/)].flatMap((file) =>
      read(file)
        .split('\n')
        .map((line, i) => ({ file, line: i + 1, text: line }))
        .filter(({ text }) => /CONTRACT|seed §|§/.test(text)),
    );
    assert.deepEqual(cited.map((c) => `${c.file}:${c.line}: ${c.text.trim()}`), []);
  });
});
