import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FileObjectStore } from '../../src/objects/file-object-store.js';
import { ContentMismatchError } from '../../src/objects/object-store.js';
import { objectStoreContract } from './object-store.contract.js';
import { startTestServer } from '../support/test-server.js';

// The folder store's presigned URLs are served by the nds server itself, so the suite runs against one.
objectStoreContract('folder store (through a running nds server)', async () => {
  const server = await startTestServer();
  return { store: server.deps.objects, close: () => server.close(), advanceClock: (ms) => server.clock.advance(ms) };
});

describe('folder store writes', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'nds-file-store-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  const pattern = (seed: number, size: number) => {
    const b = Buffer.alloc(size);
    for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 7 + (i >> 11)) & 0xff;
    return b;
  };

  it('leaves nothing behind when the body fails half-way, and the next writes keep their bytes', async () => {
    const store = new FileObjectStore(root);
    async function* failing() {
      for (let i = 0; i < 5; i++) yield pattern(i, 700_000);
      throw new Error('the client went away');
    }
    await assert.rejects(store.put('d/objects/broken', Readable.from(failing())), /went away/);
    assert.deepEqual(await readdir(path.join(root, 'd/objects')), []);
    // Many writes at once, of sizes around the staging buffer's, through buffers the failed write gave back.
    const sizes = [1, 1 << 20, (1 << 20) - 1, (1 << 20) + 1, 3 * (1 << 20) + 17, 65_536, 5_000_000];
    const bodies = sizes.map((size, i) => pattern(100 + i, size));
    await Promise.all(
      bodies.map((body, i) => {
        const chunks = Array.from({ length: Math.ceil(body.length / 65_536) }, (_, k) => body.subarray(k * 65_536, (k + 1) * 65_536));
        return store.put(`d/objects/${i}`, Readable.from(chunks), { contentLength: body.length, sha256: createHash('sha256').update(body).digest('hex') });
      }),
    );
    for (const [i, body] of bodies.entries()) assert.ok((await readFile(path.join(root, `d/objects/${i}`))).equals(body), `object ${i}`);
  });

  it('leaves no file behind when a large body written directly is refused', async () => {
    const store = new FileObjectStore(root);
    const good = pattern(5, 2 * (1 << 20) + 100);
    const tampered = Buffer.from(good);
    tampered[1 << 20] ^= 0xff;
    await assert.rejects(
      store.put('t/objects/large', Readable.from([tampered]), { contentLength: good.length, sha256: createHash('sha256').update(good).digest('hex') }),
      ContentMismatchError,
    );
    assert.deepEqual(await readdir(path.join(root, 't/objects')), []);
  });

  it('stops reading a body at the first byte past its promised size', async () => {
    const store = new FileObjectStore(root);
    let pulled = 0;
    async function* endless() {
      for (;;) {
        pulled++;
        yield pattern(pulled, 65_536);
      }
    }
    await assert.rejects(store.put('d/objects/endless', Readable.from(endless()), { contentLength: 200_000 }), ContentMismatchError);
    assert.ok(pulled <= 5, `read ${pulled} chunks`);
    assert.equal(await store.head('d/objects/endless'), undefined);
  });
});
