/**
 * The documentation a newcomer reads: every page of docs/ is linked from the README, and neither the docs nor
 * the code cite documents that are not in the repository (a section sign is how such citations looked); every
 * file of the repository a page names exists; and no page speaks of documents users never see.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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

  it('names only files and folders that exist', () => {
    // `src/...`, `test/...`, `bench/...`, `docs/...`, `clients/...`, `scripts/...` in backticks or links,
    // up to the first character that is no part of a path; placeholders (`<id>`, `*`, `...`) are not paths.
    const roots = /(?:^|[\s`(\[])((?:src|test|bench|docs|clients|scripts)\/[A-Za-z0-9_.\-/]*[A-Za-z0-9_\-/])/g;
    const missing: string[] = [];
    for (const file of [...filesUnder('docs', /\.md$/), 'README.md', ...filesUnder('clients', /\.md$/)]) {
      read(file)
        .split('\n')
        .forEach((line, i) => {
          for (const m of line.matchAll(roots)) {
            const cited = m[1]!.replace(/\/$/, '');
            const after = line.slice(m.index! + m[0].length);
            if (/^[<*]|^\.\.\./.test(after) || /[<>*]/.test(cited)) continue;
            // A doc's own relative links (`images/x.png` in docs/) resolve from its folder too.
            if (!existsSync(path.join(repo, cited)) && !existsSync(path.join(repo, path.dirname(file), cited))) missing.push(`${file}:${i + 1}: ${cited}`);
          }
        });
    }
    assert.deepEqual(missing, []);
  });

  it('never speaks of the contract or the spec: users read the docs, not the documents the project was built from', () => {
    const words = /\bcontract\b|\b(?:the|a|our|its|this)\s+spec(?:ification)?\b/i;
    const found = [...filesUnder('docs', /\.md$/), 'README.md', ...filesUnder('clients', /\.md$/)].flatMap((file) =>
      read(file)
        .split('\n')
        .map((text, i) => ({ file, line: i + 1, text }))
        .filter(({ text }) => words.test(text)),
    );
    assert.deepEqual(found.map((f) => `${f.file}:${f.line}: ${f.text.trim()}`), []);
  });
});
