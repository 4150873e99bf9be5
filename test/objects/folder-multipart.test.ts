/**
 * The folder store's uploads in parts written in place: parts land at their offsets in one file, completion
 * hashes it once and renames it (no copy), and every promise of the parts-in-their-own-files design holds under
 * many requests at once: a refused part loses nothing, a part sent again replaces the old one, completion never
 * lets a write reach the stored object, and the bytes at the target are exactly the verified ones.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FileObjectStore } from '../../src/objects/file-object-store.js';
import { ContentMismatchError, MultipartPartMissingError, MultipartUploadGoneError } from '../../src/objects/object-store.js';

const MIB = 1024 ** 2;
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Waits until `done` answers true, asking again every 10 ms, for at most 10 s. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (const started = Date.now(); !(await done()); ) {
    if (Date.now() - started > 10_000) throw new Error('waited 10 s in vain');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('folder store uploads in parts, written in place', () => {
  let root: string;
  let store: FileObjectStore;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'nds-folder-parts-'));
    store = new FileObjectStore(root);
  });
  after(async () => {
    await store.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A file, its layout and helpers to send its parts. */
  const upload = async (name: string, size: number, partSize: number) => {
    const file = randomBytes(size);
    const key = `uploads/${name}/object`;
    const id = await store.createMultipart(key, { size, partSize });
    const count = Math.ceil(size / partSize);
    const partOf = (n: number) => file.subarray((n - 1) * partSize, Math.min(size, n * partSize));
    const partKey = (n: number) => `${key}.parts-${id}/${String(n).padStart(5, '0')}`;
    /** Sends `bytes` as part `n`, checked against part n's true length and hash; chunks of 64 KiB, as a socket gives them. */
    const send = (n: number, bytes: Uint8Array = partOf(n), claim: Uint8Array = partOf(n)) => {
      const chunks = Array.from({ length: Math.ceil(bytes.length / 65_536) }, (_, k) => bytes.subarray(k * 65_536, (k + 1) * 65_536));
      return store.put(partKey(n), Readable.from(chunks), { contentLength: claim.length, sha256: sha(claim) });
    };
    const parts = async () => (await store.listParts(key, id))?.map((p) => p.partNumber);
    const target = `d/objects/${sha(file)}`;
    const complete = () => store.completeMultipart(key, id, count, { key: target, size, sha256: sha(file) });
    return { file, key, id, count, partOf, send, parts, target, complete };
  };

  it('writes parts sent out of order and at once into one file, and stores it by a rename, not a copy', async () => {
    const u = await upload('in-place', 9 * MIB + 4097, 2 * MIB);
    assert.equal(u.count, 5);
    await Promise.all([5, 2, 4, 1, 3].map((n) => u.send(n)));
    assert.deepEqual(await u.parts(), [1, 2, 3, 4, 5]);
    const dir = path.join(root, `${u.key}.parts-${u.id}`);
    const before = await stat(path.join(dir, 'data'));
    assert.equal(before.size, u.file.length);
    const info = await u.complete();
    assert.equal(info.size, u.file.length);
    assert.ok((await readFile(path.join(root, u.target))).equals(u.file));
    // The very file the parts were written into: nothing was copied.
    assert.equal((await stat(path.join(root, u.target))).ino, before.ino);
    await assert.rejects(stat(dir), { code: 'ENOENT' });
  });

  it('refuses a damaged part over a stored one and keeps the stored bytes; a part sent again replaces the old', async () => {
    const u = await upload('replace', 6 * MIB, 2 * MIB);
    for (let n = 1; n <= u.count; n++) await u.send(n);
    const damaged = Buffer.from(u.partOf(2));
    damaged[MIB + 5] ^= 0xff;
    await assert.rejects(u.send(2, damaged), ContentMismatchError);
    // Short, and long: refused too, and the part stays stored.
    await assert.rejects(u.send(2, u.partOf(2).subarray(1)), ContentMismatchError);
    await assert.rejects(u.send(2, Buffer.concat([u.partOf(2), Buffer.from('x')])), ContentMismatchError);
    assert.deepEqual(await u.parts(), [1, 2, 3]);
    // Sent again with other (checked) bytes: those replace the old ones, and the whole file is theirs.
    const other = randomBytes(2 * MIB);
    await u.send(2, other, other);
    const file = Buffer.concat([u.partOf(1), other, u.partOf(3)]);
    await store.completeMultipart(u.key, u.id, u.count, { key: `d/objects/${sha(file)}`, size: file.length, sha256: sha(file) });
    assert.ok((await readFile(path.join(root, `d/objects/${sha(file)}`))).equals(file));
  });

  it('refuses a damaged part where none is stored, and stores the good one sent after it', async () => {
    const u = await upload('damaged-first', 4 * MIB + 10, 2 * MIB);
    const damaged = Buffer.from(u.partOf(3));
    damaged[3] ^= 0xff;
    await assert.rejects(u.send(3, damaged), ContentMismatchError);
    assert.deepEqual(await u.parts(), []);
    await Promise.all([1, 2, 3].map((n) => u.send(n)));
    await u.complete();
    assert.ok((await readFile(path.join(root, u.target))).equals(u.file));
  });

  it('refuses a whole-file hash that is not the bytes, stores nothing, and drops the upload', async () => {
    const u = await upload('wrong-hash', 3 * MIB, 2 * MIB);
    await Promise.all([1, 2].map((n) => u.send(n)));
    const claimed = sha(Buffer.from('other bytes'));
    await assert.rejects(store.completeMultipart(u.key, u.id, u.count, { key: `d/objects/${claimed}`, size: u.file.length, sha256: claimed }), (err: unknown) => err instanceof ContentMismatchError && err.actual.sha256 === sha(u.file));
    assert.equal(await store.head(`d/objects/${claimed}`), undefined);
    assert.equal(await store.listParts(u.key, u.id), undefined);
  });

  it('keeps the upload open when a part is missing at completion', async () => {
    const u = await upload('missing', 3 * MIB, 2 * MIB);
    await u.send(1);
    await assert.rejects(u.complete(), MultipartPartMissingError);
    await u.send(2);
    await u.complete();
    assert.ok((await readFile(path.join(root, u.target))).equals(u.file));
  });

  it('stores exactly the verified bytes under many requests at once: good, damaged and repeated parts and racing completes', async () => {
    for (let round = 0; round < 5; round++) {
      const u = await upload(`race-${round}`, 10 * MIB + 123, 2 * MIB);
      // Every part three times at once, one of the three damaged in one byte.
      const sends = [];
      for (let n = 1; n <= u.count; n++) {
        const damaged = Buffer.from(u.partOf(n));
        damaged[(n * 7919) % damaged.length] ^= 0x55;
        sends.push(u.send(n), u.send(n, damaged), u.send(n));
      }
      const outcomes = await Promise.allSettled(sends);
      assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 2 * u.count);
      for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof ContentMismatchError, String(o.reason));
      // Eight completes, and more parts sent again while they run: one complete stores the file, the others find
      // the upload gone; a part sent meanwhile is either taken before the hash is read or refused as gone.
      const completes = Array.from({ length: 8 }, () => u.complete());
      const late = Array.from({ length: 6 }, (_, i) => u.send((i % u.count) + 1));
      // Both observed at once: a late send refused while the completes are awaited is no unhandled rejection.
      const [done, lateDone] = await Promise.all([Promise.allSettled(completes), Promise.allSettled(late)]);
      assert.equal(done.filter((o) => o.status === 'fulfilled').length, 1, JSON.stringify(done.map((o) => o.status)));
      for (const o of done) if (o.status === 'rejected') assert.ok(o.reason instanceof MultipartUploadGoneError, String(o.reason));
      for (const o of lateDone) if (o.status === 'rejected') assert.ok(o.reason instanceof MultipartUploadGoneError, String(o.reason));
      const stored = await readFile(path.join(root, u.target));
      assert.equal(sha(stored), sha(u.file), `round ${round}: the stored object is not the verified bytes`);
      // No part folder, data file or leftover temporary file anywhere under the upload.
      assert.deepEqual(await readdir(path.join(root, 'uploads', `race-${round}`)), []);
    }
  });

  it('waits for a part write under way before it hashes, so no write reaches the stored object afterwards', async () => {
    const u = await upload('slow-writer', 4 * MIB, 2 * MIB);
    await u.send(1);
    await u.send(2);
    // Part 2 sent again, slowly, with other bytes: the completion must not hash or rename the file meanwhile.
    const other = randomBytes(2 * MIB);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Set once the store has taken the first half and asks for the rest: the write is under way.
    let underWay = false;
    async function* slow() {
      yield other.subarray(0, MIB);
      underWay = true;
      await gate;
      yield other.subarray(MIB);
    }
    const resend = store.put(`${u.key}.parts-${u.id}/00002`, Readable.from(slow()), { contentLength: other.length, sha256: sha(other) });
    await until(() => underWay);
    const file = Buffer.concat([u.partOf(1), other]);
    let completed = false;
    const completion = store.completeMultipart(u.key, u.id, u.count, { key: `d/objects/${sha(file)}`, size: file.length, sha256: sha(file) }).then((info) => {
      completed = true;
      return info;
    });
    // Once the completion has closed the upload, a part write that starts is refused. Until then part 1 sent
    // again (the same bytes) is stored as before; the completion itself must still be waiting for part 2.
    await until(async () => {
      try {
        await u.send(1);
        return false;
      } catch (err) {
        if (err instanceof MultipartUploadGoneError) return true;
        throw err;
      }
    });
    assert.equal(completed, false, 'the completion went on while a part was being written');
    release();
    await resend;
    await completion;
    assert.ok((await readFile(path.join(root, `d/objects/${sha(file)}`))).equals(file));
  });

  it('completes in another process (a restarted server) from the parts on disk, hashing the file anew', async () => {
    const u = await upload('restarted', 5 * MIB + 1, 2 * MIB);
    await Promise.all([1, 2, 3].map((n) => u.send(n)));
    const restarted = new FileObjectStore(root);
    try {
      assert.deepEqual((await restarted.listParts(u.key, u.id))?.map((p) => p.partNumber), [1, 2, 3]);
      await restarted.completeMultipart(u.key, u.id, u.count, { key: u.target, size: u.file.length, sha256: sha(u.file) });
    } finally {
      await restarted.close();
    }
    assert.ok((await readFile(path.join(root, u.target))).equals(u.file));
  });

  it('still completes an upload started without a layout (one file a part)', async () => {
    const file = randomBytes(3 * MIB);
    const key = 'uploads/old/object';
    const id = await store.createMultipart(key);
    const parts = [file.subarray(0, 2 * MIB), file.subarray(2 * MIB)];
    await Promise.all(parts.map((p, i) => store.put(`${key}.parts-${id}/0000${i + 1}`, Readable.from([p]), { contentLength: p.length, sha256: sha(p) })));
    assert.deepEqual((await store.listParts(key, id))?.map((p) => p.size), [2 * MIB, MIB]);
    await store.completeMultipart(key, id, 2, { key: `d/objects/${sha(file)}`, size: file.length, sha256: sha(file) });
    assert.ok((await readFile(path.join(root, `d/objects/${sha(file)}`))).equals(file));
  });
});
