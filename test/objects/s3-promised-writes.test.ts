/**
 * Streamed writes to the S3 store that promise a SHA-256 (git-lfs uploads through the server, object-credential
 * writes, blobs copied out of a commit), against radosgw (TEST_S3_URL). Content keys are hashes, so writers of
 * the same content race for one key: bytes that are not the promised ones must never be readable there, and a
 * refused write must not take away the object a good write put there.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { GetObjectTaggingCommand, ListMultipartUploadsCommand, S3Client } from '@aws-sdk/client-s3';
import { ContentMismatchError } from '../../src/objects/object-store.js';
import { parseS3Url, S3ObjectStore } from '../../src/objects/s3-object-store.js';

const url = process.env.TEST_S3_URL;
const MIB = 1024 ** 2;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Sizes on both of the store's write paths: one PutObject, and a multipart upload (parts of 8 MiB). */
const SIZES = [{ name: 'one PUT', bytes: 300_001 }, { name: 'in parts', bytes: 17 * MIB + 3 }];

/** `bytes` with one bit changed near the end: the promised length, other content. */
function tampered(bytes: Buffer): Buffer {
  const copy = Buffer.from(bytes);
  copy[copy.length - 2] ^= 1;
  return copy;
}

/**
 * A body that hands out `bytes` in 1 MiB chunks and then waits without ending: `sent` settles once the
 * writer has asked for more after the last byte, and `end()` ends it.
 */
function heldBody(bytes: Buffer): { stream: Readable; sent: Promise<void>; end(): void } {
  let at = 0;
  let allSent!: () => void;
  const sent = new Promise<void>((resolve) => (allSent = resolve));
  const stream = new Readable({
    read() {
      if (at >= bytes.length) {
        allSent();
        return;
      }
      this.push(bytes.subarray(at, at + MIB));
      at += MIB;
    },
  });
  return { stream, sent, end: () => stream.push(null) };
}

describe('S3 store: a streamed write that promises a SHA-256', { skip: url ? undefined : 'TEST_S3_URL is not set (run scripts/ci/services/radosgw.sh and source scripts/ci/env.sh)' }, () => {
  let store: S3ObjectStore;
  let client: S3Client;
  const prefix = `test-s3-promised/${Date.now()}-${randomBytes(4).toString('hex')}`;
  before(() => {
    store = S3ObjectStore.fromUrl(url!);
    const loc = parseS3Url(url!);
    client = new S3Client({ region: loc.region, endpoint: loc.endpoint, forcePathStyle: true, credentials: { accessKeyId: loc.accessKeyId!, secretAccessKey: loc.secretAccessKey! } });
  });
  after(async () => {
    await store.deletePrefix(`${prefix}/`);
    await store.close();
    client.destroy();
  });

  /** Multipart uploads still open under `key`: a refused write leaves none behind to hold storage. */
  const openUploads = async (key: string) => (await client.send(new ListMultipartUploadsCommand({ Bucket: store.bucket, Prefix: key }))).Uploads ?? [];

  for (const size of SIZES) {
    it(`refuses other bytes, a byte short or a byte over, and nothing appears at the key (${size.name})`, async () => {
      const good = randomBytes(size.bytes);
      const promise = { sha256: sha(good), contentLength: good.length };
      const key = `${prefix}/absent-${size.bytes}/${promise.sha256}`;
      for (const [what, body] of [
        ['other bytes', tampered(good)],
        ['a byte short', good.subarray(0, good.length - 1)],
        ['a byte over', Buffer.concat([good, Buffer.from('x')])],
      ] as const) {
        await assert.rejects(store.put(key, Readable.from([body]), promise), ContentMismatchError, what);
        assert.equal(await store.head(key), undefined, what);
      }
      assert.deepEqual(await openUploads(key), []);
    });

    it(`leaves the good object already at the key as it was when it refuses other bytes (${size.name})`, async () => {
      // Two writers of the same content key: a good one finished first, a wrong one (same length) comes second.
      const good = randomBytes(size.bytes);
      const key = `${prefix}/race-${size.bytes}/${sha(good)}`;
      const stored = await store.put(key, good);
      await assert.rejects(store.put(key, Readable.from([tampered(good)]), { sha256: sha(good), contentLength: good.length }), ContentMismatchError);
      assert.equal((await store.head(key))?.etag, stored.etag);
      assert.ok((await store.readAll(key))!.equals(good), 'still the good bytes');
    });

    it(`never lets a reader of the key see other bytes while they are sent (${size.name})`, async () => {
      const good = randomBytes(size.bytes);
      const key = `${prefix}/held-${size.bytes}/${sha(good)}`;
      const stored = await store.put(key, good);
      const body = heldBody(tampered(good));
      const writing = store.put(key, body.stream, { sha256: sha(good), contentLength: good.length });
      writing.catch(() => undefined);
      // Every promised byte has been handed to the store's writer; the body has not ended yet.
      await body.sent;
      assert.equal((await store.head(key))?.etag, stored.etag);
      assert.ok((await store.readAll(key))!.equals(good));
      body.end();
      await assert.rejects(writing, ContentMismatchError);
      assert.ok((await store.readAll(key))!.equals(good));
    });
  }

  it('stores the promised bytes streamed, tagged public when asked, untagged otherwise', async () => {
    const good = randomBytes(9 * MIB + 1);
    const tags = async (key: string) => (await client.send(new GetObjectTaggingCommand({ Bucket: store.bucket, Key: key }))).TagSet ?? [];
    const open = `${prefix}/tagged/${sha(good)}`;
    const info = await store.put(open, Readable.from([good]), { sha256: sha(good), contentLength: good.length, publicRead: true, contentType: 'application/x-nwb' });
    assert.equal(info.size, good.length);
    assert.equal((await store.head(open))?.contentType, 'application/x-nwb');
    assert.deepEqual(await tags(open), [{ Key: 'nds-access', Value: 'public' }]);
    assert.ok((await store.readAll(open))!.equals(good));
    const closed = `${prefix}/untagged/${sha(good)}`;
    await store.put(closed, Readable.from([good]), { sha256: sha(good) });
    assert.deepEqual(await tags(closed), []);
  });
});
