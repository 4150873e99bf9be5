/**
 * The S3 store's multipart completion against radosgw (TEST_S3_URL): the answer is the stored object's metadata,
 * missing parts are named and leave the upload open, and a mismatch leaves nothing at the target.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ContentMismatchError, MultipartPartMissingError } from '../../src/objects/object-store.js';
import { S3ObjectStore } from '../../src/objects/s3-object-store.js';

const url = process.env.TEST_S3_URL;
const MIB = 1024 ** 2;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('S3 store: completing a multipart upload', { skip: url ? undefined : 'TEST_S3_URL is not set (run scripts/ci/services/radosgw.sh and source scripts/ci/env.sh)' }, () => {
  let store: S3ObjectStore;
  const prefix = `test-s3-multipart/${Date.now()}-${randomBytes(4).toString('hex')}`;
  before(() => {
    store = S3ObjectStore.fromUrl(url!);
  });
  after(async () => {
    await store.deletePrefix(`${prefix}/`);
    await store.close();
  });

  /** An upload of `file` in parts of 5 MiB at a staging key, with the parts of `send` sent. */
  const upload = async (file: Buffer, send: number[]) => {
    const key = `${prefix}/${randomBytes(6).toString('hex')}/object`;
    const id = await store.createMultipart(key);
    for (const n of send) {
      const part = file.subarray((n - 1) * 5 * MIB, n * 5 * MIB);
      const target = await store.presignPart(key, id, n, { expiresIn: 600, contentLength: part.length, sha256: sha(part) });
      const res = await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(part) });
      assert.ok(res.ok, `part ${n}: ${res.status} ${await res.text()}`);
    }
    return { key, id, count: Math.ceil(file.length / (5 * MIB)) };
  };

  it('stores the verified file at the target and answers the metadata a HEAD of it gives; the staging object is gone', async () => {
    const file = randomBytes(11 * MIB + 5);
    const u = await upload(file, [1, 2, 3]);
    const target = `${prefix}/objects/${sha(file)}`;
    const info = await store.completeMultipart(u.key, u.id, u.count, { key: target, size: file.length, sha256: sha(file) });
    const head = await store.head(target);
    assert.deepEqual({ key: info.key, size: info.size, etag: info.etag }, { key: head!.key, size: head!.size, etag: head!.etag });
    assert.ok(Math.abs(info.lastModified.getTime() - head!.lastModified.getTime()) < 2000);
    assert.ok((await store.readAll(target))!.equals(file));
    assert.equal(await store.head(u.key), undefined);
  });

  it('names the missing parts and leaves the upload open; refuses a mismatch and leaves nothing at the target', async () => {
    const file = randomBytes(11 * MIB);
    const u = await upload(file, [1, 3]);
    const claimed = sha(Buffer.from('other bytes'));
    const target = `${prefix}/objects/${claimed}`;
    await assert.rejects(store.completeMultipart(u.key, u.id, u.count, { key: target, size: file.length, sha256: claimed }), (err: unknown) => err instanceof MultipartPartMissingError && err.missing.join() === '2');
    assert.deepEqual((await store.listParts(u.key, u.id))!.map((p) => p.partNumber), [1, 3]);
    const part = file.subarray(5 * MIB, 10 * MIB);
    const second = await store.presignPart(u.key, u.id, 2, { expiresIn: 600, contentLength: part.length, sha256: sha(part) });
    assert.ok((await fetch(second.url, { method: 'PUT', headers: second.headers, body: new Uint8Array(part) })).ok);
    await assert.rejects(store.completeMultipart(u.key, u.id, u.count, { key: target, size: file.length, sha256: claimed }), (err: unknown) => err instanceof ContentMismatchError && err.actual.sha256 === sha(file));
    assert.equal(await store.head(target), undefined);
    assert.equal(await store.head(u.key), undefined);
  });
});
