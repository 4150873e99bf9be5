/**
 * One contract for every ObjectStore: the folder store and the S3 store run the same suite
 * (file-object-store.test.ts, s3-object-store.test.ts). Each run works under its own random prefix.
 */
import { request as httpRequest } from 'node:http';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ContentMismatchError, type ObjectStore } from '../../src/objects/object-store.js';

export interface StoreUnderTest {
  store: ObjectStore;
  close(): Promise<void>;
  /**
   * Moves the clock the store signs and checks its URLs by (the folder store: the server's test clock). A store
   * whose clock is not ours (S3) leaves it out, and its expiry test waits in real time.
   */
  advanceClock?(ms: number): void;
}

async function text(store: ObjectStore, key: string, range?: { start: number; end: number }): Promise<string | undefined> {
  const o = await store.get(key, range);
  if (!o) return undefined;
  const parts: Buffer[] = [];
  for await (const chunk of o.body) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function sha256(b: Buffer | string): string {
  return createHash('sha256').update(b).digest('hex');
}

/** A stream of `total` pseudo-random bytes in 1 MiB chunks, never all in memory, and its hash. */
function bigBody(total: number): { stream: Readable; sha256: Promise<string> } {
  const h = createHash('sha256');
  const block = randomBytes(1024 * 1024);
  let sent = 0;
  let resolve!: (v: string) => void;
  const done = new Promise<string>((r) => (resolve = r));
  const stream = new Readable({
    read() {
      if (sent >= total) {
        resolve(h.digest('hex'));
        this.push(null);
        return;
      }
      const n = Math.min(block.length, total - sent);
      const chunk = Buffer.from(block.subarray(0, n));
      chunk.writeUInt32BE(sent >>> 0, 0);
      h.update(chunk);
      sent += n;
      this.push(chunk);
    },
  });
  return { stream, sha256: done };
}

export function objectStoreContract(name: string, open: () => Promise<StoreUnderTest>, options: { skip?: string } = {}): void {
  describe(`ObjectStore contract: ${name}`, { skip: options.skip }, () => {
    let t: StoreUnderTest;
    let store: ObjectStore;
    const p = `t${randomBytes(4).toString('hex')}/`;
    before(async () => {
      t = await open();
      store = t.store;
    });
    after(async () => {
      await store?.deletePrefix(p);
      await t?.close();
    });

    it('writes an object whole and reads it back with its metadata', async () => {
      const info = await store.put(`${p}a/one.json`, '{"x":1}', { contentType: 'application/json' });
      assert.equal(info.size, 7);
      assert.match(info.etag, /^".+"$/);
      assert.equal(await text(store, `${p}a/one.json`), '{"x":1}');
      const head = await store.head(`${p}a/one.json`);
      assert.equal(head?.size, 7);
      assert.equal(head?.etag, info.etag);
    });

    it('reads a small object whole in one buffer', async () => {
      const bytes = randomBytes(100_003);
      await store.put(`${p}whole/chunk`, bytes);
      assert.deepEqual(await store.readAll(`${p}whole/chunk`), bytes);
      await store.put(`${p}whole/empty`, '');
      assert.equal((await store.readAll(`${p}whole/empty`))?.length, 0);
      assert.equal(await store.readAll(`${p}whole`), undefined, 'a prefix is not an object');
      await assert.rejects(store.readAll('../x'), RangeError);
    });

    it('answers undefined for a missing object, and deleting one is not an error', async () => {
      assert.equal(await store.head(`${p}missing`), undefined);
      assert.equal(await store.get(`${p}missing`), undefined);
      assert.equal(await store.readAll(`${p}missing`), undefined);
      await store.delete(`${p}missing`);
    });

    it('reads a byte range and reports the whole object size', async () => {
      await store.put(`${p}range.txt`, '0123456789');
      const o = await store.get(`${p}range.txt`, { start: 2, end: 5 });
      assert.equal(o?.info.size, 10);
      o?.body.destroy(); // not read: its file handle (or connection) is let go here
      assert.equal(await text(store, `${p}range.txt`, { start: 2, end: 5 }), '2345');
      assert.equal(await text(store, `${p}range.txt`, { start: 9, end: 9 }), '9');
    });

    it('replaces an object atomically with a new entity tag', async () => {
      const a = await store.put(`${p}replace`, 'first');
      await new Promise((r) => setTimeout(r, 5));
      const b = await store.put(`${p}replace`, 'second, longer');
      assert.notEqual(a.etag, b.etag);
      assert.equal(await text(store, `${p}replace`), 'second, longer');
    });

    it('lists by prefix in key order, including prefixes that stop inside a name', async () => {
      for (const k of ['l/b', 'l/a/2', 'l/a/1', 'l/c.txt', 'lx/other']) await store.put(`${p}${k}`, k);
      const all: string[] = [];
      for await (const o of store.list(`${p}l/`)) all.push(o.key.slice(p.length));
      assert.deepEqual(all, ['l/a/1', 'l/a/2', 'l/b', 'l/c.txt']);
      const partial: string[] = [];
      for await (const o of store.list(`${p}l/a`)) partial.push(o.key.slice(p.length));
      assert.deepEqual(partial, ['l/a/1', 'l/a/2']);
    });

    it('deletes by prefix and leaves the rest', async () => {
      for (const k of ['d/1', 'd/2/3', 'dd/4']) await store.put(`${p}${k}`, k);
      assert.equal(await store.deletePrefix(`${p}d/`), 2);
      assert.equal(await store.head(`${p}d/1`), undefined);
      assert.equal(await store.head(`${p}d/2/3`), undefined);
      assert.equal(await text(store, `${p}dd/4`), 'dd/4');
    });

    it('deletes more objects than one batch holds', async () => {
      const keys = Array.from({ length: 1005 }, (_, i) => `${p}many/${String(i).padStart(5, '0')}`);
      for (let i = 0; i < keys.length; i += 50) await Promise.all(keys.slice(i, i + 50).map((k) => store.put(k, 'x')));
      assert.equal(await store.deletePrefix(`${p}many/`), 1005);
      let left = 0;
      for await (const _ of store.list(`${p}many/`)) left++;
      assert.equal(left, 0);
    });

    it('refuses keys that could escape the store', async () => {
      for (const bad of ['../x', 'a/../../x', '/abs', 'a//b', 'a\\b', 'a/./b', '']) {
        await assert.rejects(store.put(bad, 'x'), RangeError, bad);
      }
    });

    it('streams a large body in and out, keeping its bytes exactly', async () => {
      const size = 20 * 1024 * 1024 + 123;
      const body = bigBody(size);
      const info = await store.put(`${p}big.bin`, body.stream);
      assert.equal(info.size, size);
      const o = await store.get(`${p}big.bin`);
      const h = createHash('sha256');
      let n = 0;
      for await (const chunk of o!.body) {
        h.update(chunk as Buffer);
        n += (chunk as Buffer).length;
      }
      assert.equal(n, size);
      assert.equal(h.digest('hex'), await body.sha256);
    });

    it('refuses a body whose size or hash is not the promised one, and keeps nothing', async () => {
      const good = 'promised content';
      await assert.rejects(store.put(`${p}v/hash`, 'other content!!!', { sha256: sha256(good) }), ContentMismatchError);
      assert.equal(await store.head(`${p}v/hash`), undefined);
      await assert.rejects(store.put(`${p}v/size`, Readable.from([Buffer.from(good)]), { contentLength: 3 }), ContentMismatchError);
      assert.equal(await store.head(`${p}v/size`), undefined);
      await assert.rejects(store.put(`${p}v/stream`, Readable.from([Buffer.from('tampered')]), { sha256: sha256(good) }), ContentMismatchError);
      assert.equal(await store.head(`${p}v/stream`), undefined);
      const ok = await store.put(`${p}v/ok`, Readable.from([Buffer.from(good)]), { sha256: sha256(good), contentLength: good.length });
      assert.equal(ok.size, good.length);
    });

    it('refuses a large body with one byte changed, or one short of its size, and keeps nothing', async () => {
      const good = randomBytes(3 * 1024 * 1024 + 5);
      const tampered = Buffer.from(good);
      tampered[2 * 1024 * 1024 + 1] ^= 1;
      const declared = { sha256: sha256(good), contentLength: good.length };
      await assert.rejects(store.put(`${p}large/hash`, Readable.from([tampered]), declared), ContentMismatchError);
      assert.equal(await store.head(`${p}large/hash`), undefined);
      await assert.rejects(store.put(`${p}large/short`, Readable.from([good.subarray(0, good.length - 1)]), declared), ContentMismatchError);
      assert.equal(await store.head(`${p}large/short`), undefined);
      const ok = await store.put(`${p}large/ok`, Readable.from([good]), declared);
      assert.equal(ok.size, good.length);
      assert.equal(await text(store, `${p}large/ok`, { start: good.length - 5, end: good.length - 1 }), good.subarray(-5).toString('utf8'));
    });

    it('accepts exactly the signed content through a presigned PUT', async () => {
      const body = 'uploaded through a presigned URL';
      const req = await store.presignPut(`${p}pre/ok`, { expiresIn: 600, contentLength: body.length, sha256: sha256(body) });
      const res = await fetch(req.url, { method: 'PUT', headers: req.headers, body });
      assert.ok(res.ok, `${res.status} ${await res.text()}`);
      assert.equal(await text(store, `${p}pre/ok`), body);
    });

    it('refuses tampered content, a tampered signature and another key through a presigned PUT', async () => {
      const body = 'the content that was signed';
      const req = await store.presignPut(`${p}pre/t`, { expiresIn: 600, contentLength: body.length, sha256: sha256(body) });
      const tampered = 'THE content that was signed';
      const r1 = await putOnce(req.url, req.headers, tampered);
      assert.ok(r1 >= 400 && r1 < 500, `tampered content answered ${r1}`);
      const r2 = await putOnce(req.url, { ...req.headers, 'content-length': String(body.length + 1) }, `${body}x`);
      assert.ok(r2 >= 400 && r2 < 500, `wrong size answered ${r2}`);
      const u = new URL(req.url);
      const sigName = [...u.searchParams.keys()].find((k) => /sig/i.test(k))!;
      const sig = u.searchParams.get(sigName)!;
      u.searchParams.set(sigName, (sig[0] === '0' ? '1' : '0') + sig.slice(1));
      assert.equal(await putOnce(u.toString(), req.headers, body), 403);
      const other = req.url.replace('/pre/t', '/pre/u');
      assert.equal(await putOnce(other, req.headers, body), 403);
      assert.equal(await store.head(`${p}pre/t`), undefined);
      assert.equal(await store.head(`${p}pre/u`), undefined);
    });

    it('reads through a presigned GET, with Range, and refuses a tampered one', async () => {
      await store.put(`${p}pre/get`, 'read me through a URL');
      const req = await store.presignGet(`${p}pre/get`, { expiresIn: 600 });
      const r = await fetch(req.url);
      assert.equal(r.status, 200);
      assert.equal(await r.text(), 'read me through a URL');
      const ranged = await fetch(req.url, { headers: { range: 'bytes=0-3' } });
      assert.equal(ranged.status, 206);
      assert.equal(await ranged.text(), 'read');
      const bad = await fetch(req.url.replace('/pre/get', '/pre/got'));
      assert.equal(bad.status, 403);
      await bad.arrayBuffer();
    });

    it('refuses a presigned URL once it has expired', async () => {
      await store.put(`${p}pre/exp`, 'soon gone');
      const req = await store.presignGet(`${p}pre/exp`, { expiresIn: 1 });
      if (t.advanceClock) t.advanceClock(2100);
      else await new Promise((r) => setTimeout(r, 2100));
      const r = await fetch(req.url);
      assert.equal(r.status, 403);
      await r.arrayBuffer();
    });

    it('names a public URL under the store for every key', () => {
      assert.match(store.publicUrl(`${p}zarr/index.json`), new RegExp(`/${p}zarr/index\\.json$`));
    });
  });
}

/**
 * One PUT on a connection of its own. A server may answer a refused upload before reading its body and
 * then leave that connection unusable (radosgw does); a pooled client would reuse it for the next request.
 */
function putOnce(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'PUT', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}
