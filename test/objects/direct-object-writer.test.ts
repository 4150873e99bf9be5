import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DIRECT_OBJECT_MIN, DirectObjectWriter } from '../../src/objects/direct-object-writer.js';
import { FileObjectStore } from '../../src/objects/file-object-store.js';

const pattern = (seed: number, size: number) => {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 131 + seed * 17 + (i >> 9)) & 0xff;
  return b;
};

describe('the writer thread of small objects', () => {
  let root: string;
  const writer = new DirectObjectWriter();
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'nds-direct-objects-'));
  });
  after(async () => {
    await writer.close();
    await rm(root, { recursive: true, force: true });
  });

  it('writes each object whole, of any length from its minimum to a megabyte, in folders it makes', async () => {
    const sizes = [DIRECT_OBJECT_MIN, DIRECT_OBJECT_MIN + 1, 100_001, 415_000, 4096 * 100, (1 << 20) - 1, 1 << 20];
    for (const [i, size] of sizes.entries()) {
      const body = pattern(i, size);
      const file = path.join(root, `level-${i}`, 'c', '0', String(i));
      const written = await writer.write(body, `${file}.tmp`, file);
      // /tmp is a disk filesystem here (ext4), which takes O_DIRECT.
      assert.ok(written, `size ${size} was written directly`);
      const s = await stat(file);
      assert.deepEqual(written, { size, mtimeMs: s.mtimeMs, ino: s.ino });
      assert.ok((await readFile(file)).equals(body), `bytes of size ${size}`);
      assert.deepEqual(await readdir(path.dirname(file)), [String(i)], 'no temporary file is left');
    }
  });

  it('leaves smaller and larger objects to the caller', async () => {
    assert.equal(writer.takes(DIRECT_OBJECT_MIN - 1), false);
    assert.equal(writer.takes((1 << 20) + 1), false);
    assert.equal(await writer.write(pattern(0, 1000), path.join(root, 'small.tmp'), path.join(root, 'small')), undefined);
    await assert.rejects(stat(path.join(root, 'small')), { code: 'ENOENT' });
  });

  it('keeps every byte of many writes at once, more than it has slots', async () => {
    const bodies = Array.from({ length: 40 }, (_, i) => pattern(100 + i, DIRECT_OBJECT_MIN + i * 9_973));
    const dir = path.join(root, 'many');
    await Promise.all(bodies.map((body, i) => writer.write(body, path.join(dir, `${i}.tmp`), path.join(dir, String(i)))));
    for (const [i, body] of bodies.entries()) assert.ok((await readFile(path.join(dir, String(i)))).equals(body), `object ${i}`);
    assert.equal((await readdir(dir)).length, bodies.length);
  });

  it('fails a write whose temporary file exists or whose target is a folder, keeps what was there, and goes on', async () => {
    const dir = path.join(root, 'failures');
    await mkdir(path.join(dir, 'a-folder'), { recursive: true });
    await writeFile(path.join(dir, 'taken.tmp'), 'someone else');
    await assert.rejects(writer.write(pattern(1, DIRECT_OBJECT_MIN), path.join(dir, 'taken.tmp'), path.join(dir, 'taken')), { code: 'EEXIST' });
    await assert.rejects(writer.write(pattern(2, DIRECT_OBJECT_MIN), path.join(dir, 'x.tmp'), path.join(dir, 'a-folder')), (err: NodeJS.ErrnoException) => err.code === 'EISDIR' || err.code === 'ENOTEMPTY' || err.code === 'EEXIST');
    assert.deepEqual((await readdir(dir)).sort(), ['a-folder', 'taken.tmp'], 'the failed rename left no temporary file');
    const body = pattern(3, 200_000);
    assert.ok(await writer.write(body, path.join(dir, 'after.tmp'), path.join(dir, 'after')));
    assert.ok((await readFile(path.join(dir, 'after'))).equals(body));
  });

  it('starts again after it was closed', async () => {
    await writer.close();
    const body = pattern(4, 300_000);
    const file = path.join(root, 'after-close');
    assert.ok(await writer.write(body, `${file}.tmp`, file));
    assert.ok((await readFile(file)).equals(body));
  });

  it('gives the same bytes on tmpfs, directly or, where it refuses O_DIRECT, through the caller', async (t) => {
    const shm = await mkdtemp('/dev/shm/nds-direct-objects-').catch(() => undefined);
    if (!shm) return t.skip('no /dev/shm on this machine');
    const store = new FileObjectStore(shm);
    try {
      const bodies = [pattern(5, 90_000), pattern(6, 700_000), pattern(7, 10)];
      for (const [i, body] of bodies.entries()) await store.put(`nd000001/zarr/c/${i}`, body);
      for (const [i, body] of bodies.entries()) assert.ok((await readFile(path.join(shm, 'nd000001/zarr/c', String(i)))).equals(body), `object ${i}`);
    } finally {
      await store.close();
      await rm(shm, { recursive: true, force: true });
    }
  });
});

describe('the folder store with chunks written directly', () => {
  it('reads back what a conversion put, whatever the size, as it would through the page cache', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'nds-store-chunks-'));
    const store = new FileObjectStore(root);
    try {
      const sizes = [100, DIRECT_OBJECT_MIN - 1, DIRECT_OBJECT_MIN, 250_000, (1 << 20) - 1];
      const puts = await Promise.all(sizes.map((size, i) => store.put(`nd000001/zarr/sub-01/eeg/0/c/0/${i}`, pattern(10 + i, size))));
      for (const [i, size] of sizes.entries()) {
        assert.equal(puts[i]!.size, size);
        const read = await store.readAll(`nd000001/zarr/sub-01/eeg/0/c/0/${i}`);
        assert.ok(read?.equals(pattern(10 + i, size)), `object of ${size} bytes`);
        assert.equal((await store.head(`nd000001/zarr/sub-01/eeg/0/c/0/${i}`))?.etag, puts[i]!.etag, 'the answer of put names the stored file');
      }
      // An object put again is replaced whole.
      await store.put('nd000001/zarr/sub-01/eeg/0/c/0/3', pattern(99, 80_000));
      assert.ok((await store.readAll('nd000001/zarr/sub-01/eeg/0/c/0/3'))?.equals(pattern(99, 80_000)));
    } finally {
      await store.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
