import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { LARGE_OBJECT, writeObjectFile } from '../../src/objects/object-file-write.js';
import { ContentMismatchError } from '../../src/objects/object-store.js';

const pattern = (seed: number, size: number) => {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 7 + (i >> 11)) & 0xff;
  return b;
};
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** Socket-like chunks of uneven sizes, so that no chunk boundary falls on a page or a stage boundary. */
const chunked = (body: Buffer, size = 47_111) => Readable.from(Array.from({ length: Math.ceil(body.length / size) }, (_, k) => body.subarray(k * size, (k + 1) * size)));

describe('object file writes', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'nds-object-write-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  it('writes large objects directly, cut back to their exact size, and small ones through the page cache', async () => {
    const sizes = [LARGE_OBJECT, LARGE_OBJECT + 1, LARGE_OBJECT + 4096, 2 * LARGE_OBJECT, 3 * LARGE_OBJECT + 17, 5_000_000, LARGE_OBJECT - 1, 4096, 1];
    for (const [i, size] of sizes.entries()) {
      const body = pattern(i, size);
      const file = path.join(root, `sized-${i}`);
      const written = await writeObjectFile(chunked(body), file, { contentLength: size, sha256: sha256(body) }, true);
      // /tmp is a disk filesystem here (ext4), which takes O_DIRECT.
      assert.equal(written.direct, size >= LARGE_OBJECT, `size ${size}`);
      assert.equal(written.directRefused, false);
      assert.equal(written.size, size);
      assert.equal(written.sha256, sha256(body));
      assert.ok((await readFile(file)).equals(body), `bytes of size ${size}`);
    }
  });

  it('writes through the page cache when asked not to write directly, or when the size is not declared', async () => {
    const body = pattern(9, 2 * LARGE_OBJECT + 5);
    const notAsked = await writeObjectFile(chunked(body), path.join(root, 'buffered-1'), { contentLength: body.length }, false);
    const undeclared = await writeObjectFile(chunked(body), path.join(root, 'buffered-2'), { sha256: sha256(body) }, true);
    assert.equal(notAsked.direct, false);
    assert.equal(undeclared.direct, false);
    assert.equal(undeclared.sha256, sha256(body));
    assert.ok((await readFile(path.join(root, 'buffered-1'))).equals(body));
    assert.ok((await readFile(path.join(root, 'buffered-2'))).equals(body));
  });

  it('refuses a direct body longer than declared before it reaches the disk, and a short one by its size', async () => {
    const body = pattern(3, 3 * LARGE_OBJECT);
    await assert.rejects(writeObjectFile(chunked(body), path.join(root, 'long'), { contentLength: 2 * LARGE_OBJECT }, true), ContentMismatchError);
    const short = await writeObjectFile(chunked(body.subarray(0, LARGE_OBJECT + 3)), path.join(root, 'short'), { contentLength: 2 * LARGE_OBJECT, sha256: sha256(body) }, true);
    assert.equal(short.size, LARGE_OBJECT + 3, 'the caller compares the size it declared');
    assert.notEqual(short.sha256, sha256(body));
  });

  it('keeps every byte when more large objects arrive at once than there are aligned buffers', async () => {
    const bodies = Array.from({ length: 40 }, (_, i) => pattern(200 + i, LARGE_OBJECT + 4096 * i + i));
    const written = await Promise.all(
      bodies.map((body, i) => writeObjectFile(chunked(body, 65_536), path.join(root, `many-${i}`), { contentLength: body.length, sha256: sha256(body) }, true)),
    );
    // 64 aligned buffers serve 16 objects at once; the others fall back to ordinary buffers and the page cache.
    assert.ok(written.some((w) => w.direct) && written.some((w) => !w.direct), `direct: ${written.map((w) => w.direct)}`);
    for (const [i, body] of bodies.entries()) {
      assert.equal(written[i].sha256, sha256(body));
      assert.ok((await readFile(path.join(root, `many-${i}`))).equals(body), `object ${i}`);
    }
    // The aligned buffers went back to the pool: the next large write is direct again.
    const again = await writeObjectFile(chunked(bodies[0]), path.join(root, 'again'), { contentLength: bodies[0].length }, true);
    assert.equal(again.direct, true);
  });

  it('gives its buffers back after a failing body, and the file it began is the caller to remove', async () => {
    async function* failing() {
      for (let i = 0; i < 3; i++) yield pattern(i, 700_000);
      throw new Error('the client went away');
    }
    for (let i = 0; i < 40; i++) {
      await assert.rejects(writeObjectFile(Readable.from(failing()), path.join(root, `failed-${i}`), { contentLength: 4 * LARGE_OBJECT }, true), /went away/);
    }
    const body = pattern(77, 2 * LARGE_OBJECT);
    const after = await writeObjectFile(chunked(body), path.join(root, 'after-failures'), { contentLength: body.length }, true);
    assert.equal(after.direct, true, 'forty failures did not leak the 64 aligned buffers');
    assert.ok((await readFile(path.join(root, 'after-failures'))).equals(body));
    assert.ok((await readdir(root)).includes('failed-0'));
  });
});
