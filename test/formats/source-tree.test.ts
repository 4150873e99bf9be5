/**
 * `SourceTree`: what a conversion may open of a folder (docs/security.md, "Uploaded trees are hostile"). Only
 * regular files whose real path lies inside it; every refusal is a `FileReadError` naming the file relative
 * to the folder, never its content or where a link leads.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isConversionError } from '../../src/formats/conversion-errors.js';
import { SourceTree } from '../../src/formats/source-tree.js';

describe('SourceTree', () => {
  let base: string;
  let root: string;
  let secret: string;
  const refused = (pattern: RegExp) => (err: unknown) => isConversionError(err, 'file_read_error') && pattern.test(err.message) && !err.message.includes('top secret');

  before(() => {
    base = mkdtempSync(path.join(os.tmpdir(), 'nds-tree-'));
    root = path.join(base, 'dataset');
    secret = path.join(base, 'secret');
    writeFileSync(secret, 'top secret');
    mkdirSync(path.join(root, 'sub-01/eeg'), { recursive: true });
    writeFileSync(path.join(root, 'sub-01/eeg/data.eeg'), 'samples');
    symlinkSync(secret, path.join(root, 'sub-01/eeg/out.eeg'));
    symlinkSync('../../../secret', path.join(root, 'sub-01/eeg/out-relative.eeg'));
    symlinkSync('data.eeg', path.join(root, 'sub-01/eeg/inside.eeg'));
    symlinkSync(path.join(base, 'missing'), path.join(root, 'sub-01/eeg/dangling.eeg'));
    symlinkSync(base, path.join(root, 'sub-01/eeg/outdir'));
    linkSync(secret, path.join(root, 'sub-01/eeg/hard.eeg'));
    execFileSync('mkfifo', [path.join(root, 'sub-01/eeg/pipe.eeg')]);
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it('opens a regular file inside the folder', async () => {
    const tree = await SourceTree.at(root);
    assert.equal(await tree.readText(path.join(root, 'sub-01/eeg/data.eeg')), 'samples');
    assert.equal(tree.relative(path.join(root, 'sub-01/eeg/data.eeg')), 'sub-01/eeg/data.eeg');
  });

  it('refuses a link that leads outside, absolute or relative, and one that leads nowhere', async () => {
    const tree = await SourceTree.at(root);
    for (const name of ['out.eeg', 'out-relative.eeg', 'dangling.eeg']) {
      await assert.rejects(tree.open(path.join(root, 'sub-01/eeg', name)), refused(new RegExp(`^sub-01/eeg/${name.replace('.', '\\.')} is a link that leads outside the dataset's folder`)));
    }
  });

  it('refuses a path through a linked folder, and names that climb out or are absolute', async () => {
    const tree = await SourceTree.at(root);
    await assert.rejects(tree.open(path.join(root, 'sub-01/eeg/outdir/secret')), refused(/leads outside/));
    await assert.rejects(tree.open(path.join(root, 'sub-01/eeg/../../../secret')), refused(/^secret lies outside the dataset's folder/));
    await assert.rejects(tree.open(secret), refused(/lies outside/));
    assert.equal(await tree.exists(path.join(root, '../secret')), false);
  });

  it('refuses a FIFO without blocking on it', async () => {
    const tree = await SourceTree.at(root);
    await assert.rejects(tree.open(path.join(root, 'sub-01/eeg/pipe.eeg')), refused(/is not a regular file/));
  });

  it('follows a link that stays inside the folder (a local tree, git-annex style)', async () => {
    const tree = await SourceTree.at(root);
    assert.equal(await tree.readText(path.join(root, 'sub-01/eeg/inside.eeg')), 'samples');
  });

  it("refuses by name what the checkout refused, with the checkout's sentence", async () => {
    const tree = await SourceTree.at(root, new Map([['sub-01/eeg/hard.eeg', 'sub-01/eeg/hard.eeg is a hard link in the repository: nds reads only regular files of a dataset.']]));
    await assert.rejects(tree.open(path.join(root, 'sub-01/eeg/hard.eeg')), refused(/^sub-01\/eeg\/hard\.eeg is a hard link in the repository: nds reads only regular files/));
  });

  it('says a missing file does not exist, and `exists` tells entries from nothing', async () => {
    const tree = await SourceTree.at(root);
    await assert.rejects(tree.open(path.join(root, 'sub-01/eeg/none.eeg')), refused(/^sub-01\/eeg\/none\.eeg does not exist\.$/));
    assert.equal(await tree.exists(path.join(root, 'sub-01/eeg/none.eeg')), false);
    assert.equal(await tree.exists(path.join(root, 'sub-01/eeg/out.eeg')), true);
    assert.equal(await tree.exists(path.join(root, 'sub-01/eeg')), false);
  });

  it('reaches a tree whose own root is a link', async () => {
    const linkedRoot = path.join(base, 'linked-root');
    symlinkSync(root, linkedRoot);
    const tree = await SourceTree.at(linkedRoot);
    assert.equal(await tree.readText(path.join(linkedRoot, 'sub-01/eeg/data.eeg')), 'samples');
    await assert.rejects(tree.open(path.join(linkedRoot, 'sub-01/eeg/out.eeg')), refused(/leads outside/));
  });
});
