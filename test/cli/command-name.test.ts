/**
 * How hints spell the command: `nds` only when this very program is a command on the reader's PATH (a global
 * install or `npm link`), `npx nds` otherwise, npm's own `node_modules/.bin` (which `npm start` puts on the
 * server's PATH, not on the reader's) not counting.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ndsCommand } from '../../src/cli/command-name.js';

describe('ndsCommand', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'nds-command-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  const entry = path.join(root, 'pkg', 'bin', 'nds.js');
  mkdirSync(path.dirname(entry), { recursive: true });
  writeFileSync(entry, '');
  const linked = (dir: string, target = entry) => {
    mkdirSync(path.join(root, dir), { recursive: true });
    symlinkSync(target, path.join(root, dir, 'nds'));
    return path.join(root, dir);
  };
  const globalBin = linked('prefix/bin');
  const npmBin = linked('pkg/node_modules/.bin');
  const other = path.join(root, 'other', 'nds.js');
  mkdirSync(path.dirname(other), { recursive: true });
  writeFileSync(other, '');
  const otherBin = linked('other-bin', other);

  it('says nds when this program is installed on the PATH', () => {
    assert.equal(ndsCommand(['/usr/bin', globalBin], entry), 'nds');
  });

  it('says npx nds when it is not, when only npm put it there, or when another nds is', () => {
    assert.equal(ndsCommand(['/usr/bin'], entry), 'npx nds');
    assert.equal(ndsCommand([npmBin, '/usr/bin'], entry), 'npx nds');
    assert.equal(ndsCommand([otherBin], entry), 'npx nds');
    assert.equal(ndsCommand([globalBin], undefined), 'npx nds');
  });
});
