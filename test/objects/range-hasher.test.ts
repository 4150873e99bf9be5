import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RangeHasher } from '../../src/objects/range-hasher.js';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('RangeHasher', () => {
  let dir: string;
  let hasher: RangeHasher;
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'nds-range-hasher-'));
    hasher = new RangeHasher();
  });
  after(async () => {
    await hasher.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives the SHA-256 of ranges fed in order, at offsets and lengths that are not whole pages', async () => {
    const bytes = randomBytes(9 * 1024 * 1024 + 4321);
    const file = path.join(dir, 'data');
    await writeFile(file, bytes);
    // Pieces of odd sizes, one of them larger than the thread's buffer.
    const cuts = [0, 1, 4097, 65_536 * 3 + 5, 5 * 1024 * 1024 + 17, bytes.length];
    for (let i = 0; i + 1 < cuts.length; i++) await hasher.update('a', file, cuts[i], cuts[i + 1] - cuts[i]);
    assert.equal(await hasher.digest('a'), sha(bytes));
    // A range inside the file, on its own name; the first name is forgotten after its digest.
    await hasher.update('b', file, 12_345, 2_000_000);
    assert.equal(await hasher.digest('b'), sha(bytes.subarray(12_345, 2_012_345)));
    assert.equal(await hasher.digest('a'), sha(Buffer.alloc(0)));
  });

  it('fails a range past the end of the file or of a missing file, and forgets that hash', async () => {
    const file = path.join(dir, 'short');
    await writeFile(file, randomBytes(10_000));
    await assert.rejects(hasher.update('c', file, 5_000, 10_000), /ended at/);
    await assert.rejects(hasher.update('d', path.join(dir, 'missing'), 0, 10), (err: NodeJS.ErrnoException) => err.code === 'ENOENT');
    await hasher.update('c', file, 0, 10_000);
    assert.equal(await hasher.digest('c'), sha(await import('node:fs').then((fs) => fs.readFileSync(file))));
  });
});
