/**
 * Uploads in parts over real HTTP, on the folder store and on radosgw (when TEST_S3_URL is set): parts bound
 * to their size and hash, the whole file's SHA-256 checked over the assembled bytes before it is stored, the
 * routes closed to anyone who may not write the dataset, and stale uploads swept.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import { partSizeFor, sweepStaleUploads } from '../../src/datasets/multipart-uploads.js';
import { MAX_OBJECT_BYTES, MAX_PARTS } from '../../src/objects/object-store.js';
import type { TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json, storeVariants } from './support.js';

const MIB = 1024 ** 2;
const post = (body?: unknown) => ({ method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('partSizeFor', () => {
  it('keeps the configured size while it fits 10,000 parts, and grows it in whole MiB so that 5 TiB fits', () => {
    assert.equal(partSizeFor(4 * 1024 ** 3, 16 * MIB), 16 * MIB);
    const big = partSizeFor(MAX_OBJECT_BYTES, 16 * MIB);
    assert.equal(big % MIB, 0);
    assert.ok(Math.ceil(MAX_OBJECT_BYTES / big) <= MAX_PARTS);
    assert.equal(big, 525 * MIB);
    assert.ok(Math.ceil((200 * 1024 ** 3) / partSizeFor(200 * 1024 ** 3, 5 * MIB)) <= MAX_PARTS);
  });
});

for (const variant of storeVariants) {
  describe(`uploads in parts on the ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    let owner: TestAccount;
    let stranger: TestAccount;
    let id: string;
    let otherId: string;
    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      server = await startTestServer({ env: { ...s.env, UPLOAD_PART_SIZE: String(5 * MIB), UPLOAD_PART_THRESHOLD: String(5 * MIB) } });
      owner = await createUploader(server);
      stranger = await createUploader(server);
      id = (await json(await owner.api('/datasets', post({ name: 'parts' })), 201)).id;
      otherId = (await json(await stranger.api('/datasets', post({ name: 'theirs' })), 201)).id;
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    const put = (target: { url: string; headers: Record<string, string> }, body: Uint8Array) =>
      fetch(target.url, { method: 'PUT', headers: { ...target.headers, 'content-length': String(body.length) }, body: new Uint8Array(body) });
    const partOf = (file: Buffer, start: { part_size: number }, n: number) => file.subarray((n - 1) * start.part_size, n * start.part_size);
    const start = async (file: Buffer, path: string, extra: Record<string, unknown> = {}) => json(await owner.api(`/datasets/${id}/multipart-uploads`, post({ path, size: file.length, ...extra })), 200);
    const urls = async (upload: string, file: Buffer, started: { part_size: number }, numbers: number[]) =>
      (await json(await owner.api(`/datasets/${id}/multipart-uploads/${upload}/part-urls`, post({ parts: numbers.map((n) => ({ part_number: n, sha256: sha(partOf(file, started, n)) })) })), 200)).parts;

    it('tells the threshold and part size; stores a file sent in parts out of order, verified, byte for byte', async () => {
      const settings = await json(await owner.api(`/datasets/${id}/multipart-uploads`), 200);
      assert.equal(settings.part_threshold, 5 * MIB);
      assert.equal(settings.part_size, 5 * MIB);
      assert.deepEqual(settings.uploads, []);
      const file = randomBytes(12 * MIB + 123);
      const started = await start(file, 'sub-01/eeg/big.edf');
      assert.equal(started.status, 'parts');
      assert.equal(started.part_count, 3);
      assert.match(started.upload_id, /^[0-9a-f]{32}$/);
      const listed = await json(await owner.api(`/datasets/${id}/multipart-uploads`), 200);
      assert.deepEqual(listed.uploads.map((u: { upload_id: string }) => u.upload_id), [started.upload_id]);
      const targets = await urls(started.upload_id, file, started, [3, 1, 2]);
      assert.deepEqual(targets.map((t: { size: number }) => t.size), [2 * MIB + 123, 5 * MIB, 5 * MIB]);
      await Promise.all(targets.map(async (t: { part_number: number; url: string; headers: Record<string, string> }) => {
        const res = await put(t, partOf(file, started, t.part_number));
        assert.ok(res.ok, `${res.status} ${await res.text()}`);
      }));
      const status = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 200);
      assert.deepEqual(status.parts, [1, 2, 3].map((n) => ({ part_number: n, size: partOf(file, started, n).length })));
      const done = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/complete`, post({ sha256: sha(file) })), 200);
      assert.deepEqual(done, { path: 'sub-01/eeg/big.edf', size: file.length, sha256: sha(file), status: 'stored' });
      assert.ok((await server.deps.objects.readAll(`${id}/objects/${sha(file)}`))!.equals(file));
      // The upload is gone, and no part or staging object is left behind.
      await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 404);
      const left: string[] = [];
      for await (const o of server.deps.objects.list(`uploads/${id}/`)) left.push(o.key);
      assert.deepEqual(left, []);
      // A version made of it, and a download of it, equal to the source.
      await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest: [{ path: 'sub-01/eeg/big.edf', size: file.length, sha256: sha(file) }] })), 201);
      const again = await start(file, 'copy.edf', { sha256: sha(file) });
      assert.deepEqual(again, { status: 'present', path: 'copy.edf', size: file.length, sha256: sha(file) });
    });

    it('gives the URLs of many parts in one request, each bound to its own part\'s size and hash, and none when one part named is wrong', async () => {
      const file = randomBytes(5 * 5 * MIB + 4321);
      const started = await start(file, 'batched.edf');
      assert.equal(started.part_count, 6);
      const base = `/datasets/${id}/multipart-uploads/${started.upload_id}`;
      // One part past the last, or without its hash, in a batch: the whole request is refused.
      for (const wrong of [{ part_number: 7, sha256: sha(file) }, { part_number: 3 }]) {
        const parts = [1, 2].map((n) => ({ part_number: n, sha256: sha(partOf(file, started, n)) }));
        assert.equal((await owner.api(`${base}/part-urls`, post({ parts: [...parts, wrong] }))).status, 400, JSON.stringify(wrong));
      }
      const targets = await urls(started.upload_id, file, started, [6, 1, 2, 3, 4, 5]);
      assert.deepEqual(targets.map((t: { part_number: number }) => t.part_number), [6, 1, 2, 3, 4, 5]);
      assert.deepEqual(targets.map((t: { size: number }) => t.size), [4321, 5 * MIB, 5 * MIB, 5 * MIB, 5 * MIB, 5 * MIB]);
      const byNumber = new Map<number, { url: string; headers: Record<string, string> }>(targets.map((t: { part_number: number; url: string; headers: Record<string, string> }) => [t.part_number, t]));
      // Another part's bytes (same size, other hash), or the last part's, through part 1's URL: refused, nothing kept.
      for (const other of [partOf(file, started, 2), partOf(file, started, 6)]) {
        const res = await put(byNumber.get(1)!, other);
        assert.ok(res.status >= 400 && res.status < 500, `part 1's URL took other bytes: ${res.status}`);
      }
      assert.deepEqual((await json(await owner.api(base), 200)).parts, []);
      await Promise.all(targets.map(async (t: { part_number: number; url: string; headers: Record<string, string> }) => {
        const res = await put(t, partOf(file, started, t.part_number));
        assert.ok(res.ok, `part ${t.part_number}: ${res.status} ${await res.text()}`);
      }));
      assert.equal((await json(await owner.api(`${base}/complete`, post({ sha256: sha(file) })), 200)).status, 'stored');
      assert.ok((await server.deps.objects.readAll(`${id}/objects/${sha(file)}`))!.equals(file));
    });

    it('refuses a part damaged on the way, keeps nothing of it, and takes it sent again', async () => {
      const file = randomBytes(6 * MIB);
      const started = await start(file, 'damaged.edf');
      const [first] = await urls(started.upload_id, file, started, [1]);
      const damaged = Buffer.from(partOf(file, started, 1));
      damaged[12345] ^= 0xff;
      const refused = await put(first, damaged);
      assert.ok(refused.status >= 400 && refused.status < 500, `a damaged part answered ${refused.status}`);
      const status = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 200);
      assert.deepEqual(status.parts, []);
      assert.ok((await put(first, partOf(file, started, 1))).ok);
      const [second] = await urls(started.upload_id, file, started, [2]);
      assert.ok((await put(second, partOf(file, started, 2))).ok);
      const done = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/complete`, post({ sha256: sha(file) })), 200);
      assert.equal(done.status, 'stored');
    });

    it('binds part URLs to a CRC-32 where the store says so, refusing a part damaged on the way; elsewhere asks for the SHA-256', async () => {
      const file = randomBytes(7 * MIB + 11);
      const started = await start(file, 'crc.edf');
      const crcOf = (n: number) => zlib.crc32(partOf(file, started, n)).toString(16).padStart(8, '0');
      const ask = (n: number, field: Record<string, string>) => owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/part-urls`, post({ parts: [{ part_number: n, ...field }] }));
      if (variant.name !== 'file store') {
        assert.equal(started.part_checksum, 'sha256');
        await json(await ask(1, { crc32: crcOf(1) }), 400);
        return;
      }
      assert.equal(started.part_checksum, 'crc32');
      const status = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 200);
      assert.equal(status.part_checksum, 'crc32');
      const [first] = (await json(await ask(1, { crc32: crcOf(1) }), 200)).parts;
      const damaged = Buffer.from(partOf(file, started, 1));
      damaged[4321] ^= 0x01;
      const refused = await put(first, damaged);
      assert.equal(refused.status, 400);
      assert.match(await refused.text(), /crc32/);
      assert.deepEqual((await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 200)).parts, []);
      // Another CRC-32 than the one signed is another URL: the signature does not cover it.
      const forged = new URL(first.url);
      forged.searchParams.set('crc32', zlib.crc32(damaged.subarray(0, 5 * MIB)).toString(16).padStart(8, '0'));
      assert.equal((await put({ url: forged.toString(), headers: first.headers }, damaged)).status, 403);
      assert.ok((await put(first, partOf(file, started, 1))).ok);
      // A part named by its SHA-256, as before decision 0032, is still taken.
      const [second] = (await json(await ask(2, { sha256: sha(partOf(file, started, 2)) }), 200)).parts;
      assert.ok((await put(second, partOf(file, started, 2))).ok);
      const done = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/complete`, post({ sha256: sha(file) })), 200);
      assert.equal(done.status, 'stored');
      assert.ok((await server.deps.objects.readAll(`${id}/objects/${sha(file)}`))!.equals(file));
    });

    it('answers completes raced on one upload each with the file: they join one completion', async () => {
      const file = randomBytes(11 * MIB);
      const started = await start(file, 'raced.edf');
      for (const t of await urls(started.upload_id, file, started, [1, 2, 3])) assert.ok((await put(t, partOf(file, started, t.part_number))).ok);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/complete`, post({ sha256: sha(file) }))),
      );
      const bodies = await Promise.all(answers.map(async (res) => ({ status: res.status, body: await res.json() })));
      for (const { status, body } of bodies) assert.deepEqual({ status, body }, { status: 200, body: { path: 'raced.edf', size: file.length, sha256: sha(file), status: 'stored' } });
      assert.ok((await server.deps.objects.readAll(`${id}/objects/${sha(file)}`))!.equals(file));
    });

    it('stores exactly the file when many requests race: each part sent three times at once, one damaged, then completes racing parts sent again', async () => {
      const file = randomBytes(16 * MIB + 77);
      const started = await start(file, 'many.edf');
      assert.equal(started.part_count, 4);
      const targets = await urls(started.upload_id, file, started, [1, 2, 3, 4]);
      const sends = targets.flatMap((t: { part_number: number; url: string; headers: Record<string, string> }) => {
        const good = partOf(file, started, t.part_number);
        const damaged = Buffer.from(good);
        damaged[(t.part_number * 104_729) % damaged.length] ^= 0x01;
        return [put(t, good), put(t, damaged), put(t, good)];
      });
      const answers = await Promise.all(sends);
      const statuses = answers.map((r) => r.status);
      await Promise.all(answers.map((r) => r.arrayBuffer()));
      // Per part: the two good sends stored, the damaged one refused for its content (never a server error).
      for (let i = 0; i < statuses.length; i += 3) assert.deepEqual([statuses[i], statuses[i + 1] >= 400 && statuses[i + 1] < 500, statuses[i + 2]], [200, true, 200], `part ${i / 3 + 1}: ${statuses.slice(i, i + 3)}`);
      const status = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 200);
      assert.deepEqual(status.parts.map((p: { part_number: number }) => p.part_number), [1, 2, 3, 4]);
      // Completes, and the same parts sent again, all at once.
      const completes = Array.from({ length: 6 }, () => owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/complete`, post({ sha256: sha(file) })));
      const again = targets.map((t: { part_number: number; url: string; headers: Record<string, string> }) => put(t, partOf(file, started, t.part_number)));
      const done = await Promise.all(completes.map(async (p) => {
        const res = await p;
        return { status: res.status, body: await res.json() };
      }));
      for (const res of await Promise.all(again)) {
        // Taken before the completion read the file, or refused as an upload that is gone (S3: NoSuchUpload).
        assert.ok(res.status === 200 || res.status === 404, `a part sent during completion answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer().catch(() => undefined);
      }
      for (const { status, body } of done) assert.ok(status === 200 || ((status === 404 || status === 409) && body.error), `a raced complete answered ${status}: ${JSON.stringify(body)}`);
      assert.ok(done.some((d) => d.status === 200 && d.body.sha256 === sha(file)));
      assert.ok((await server.deps.objects.readAll(`${id}/objects/${sha(file)}`))!.equals(file));
      const left: string[] = [];
      for await (const o of server.deps.objects.list(`uploads/${id}/`)) if (o.key.includes(started.upload_id)) left.push(o.key);
      assert.deepEqual(left, []);
    });

    it('refuses to complete with parts missing, and refuses a whole-file hash that is not the bytes, naming the path and both hashes', async () => {
      const file = randomBytes(6 * MIB);
      const started = await start(file, 'sub-02/eeg/wrong.edf');
      const [first] = await urls(started.upload_id, file, started, [1]);
      assert.ok((await put(first, partOf(file, started, 1))).ok);
      const incomplete = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/complete`, post({ sha256: sha(file) })), 409);
      assert.equal(incomplete.error, 'upload_incomplete');
      const [second] = await urls(started.upload_id, file, started, [2]);
      assert.ok((await put(second, partOf(file, started, 2))).ok);
      const claimed = sha(Buffer.from('not these bytes'));
      const refused = await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/complete`, post({ sha256: claimed })), 400);
      assert.equal(refused.error, 'content_mismatch');
      assert.match(refused.message, /sub-02\/eeg\/wrong\.edf/);
      assert.ok(refused.message.includes(sha(file)) && refused.message.includes(claimed), refused.message);
      assert.equal(await server.deps.objects.head(`${id}/objects/${claimed}`), undefined);
      assert.equal(await server.deps.objects.head(`${id}/objects/${sha(file)}`), undefined);
      // Nothing partial: a version naming either hash is refused.
      const version = await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.1', manifest: [{ path: 'sub-02/eeg/wrong.edf', size: file.length, sha256: claimed }] }));
      assert.ok(version.status >= 400, `a version of unstored content answered ${version.status}`);
      await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 404);
    });

    it('answers anyone who may not write the dataset as for an unknown dataset, and bounds part numbers', async () => {
      const file = randomBytes(6 * MIB);
      const started = await start(file, 'private.edf');
      const base = `/datasets/${id}/multipart-uploads/${started.upload_id}`;
      const unknown = await json(await stranger.api(`/datasets/nd999999/multipart-uploads/${started.upload_id}`), 404);
      const batch = post({ parts: [1, 2].map((n) => ({ part_number: n, sha256: sha(partOf(file, started, n)) })) });
      for (const [path, init] of [[base, undefined], [`${base}/part-urls`, post({ parts: [{ part_number: 1, sha256: sha(file) }] })], [`${base}/part-urls`, batch], [`${base}/complete`, post({ sha256: sha(file) })], [`/datasets/${id}/multipart-uploads`, undefined]] as const) {
        const body = await json(await stranger.api(path, init), 404);
        assert.deepEqual({ ...body, message: undefined }, { ...unknown, message: undefined }, path);
      }
      assert.equal((await stranger.api(base, { method: 'DELETE' })).status, 404);
      // Its upload id named under the stranger's own dataset is no upload of theirs.
      assert.equal((await json(await stranger.api(`/datasets/${otherId}/multipart-uploads/${started.upload_id}`), 404)).error, 'upload_not_found');
      // Part numbers past the file's parts, zero, or past 10,000; ids that are not 32 hex digits.
      for (const n of [3, 0, 10_001]) {
        const res = await owner.api(`${base}/part-urls`, post({ parts: [{ part_number: n, sha256: sha(file) }] }));
        assert.equal(res.status, 400, `part ${n}`);
      }
      for (const bad of ['..%2F..%2Fetc', 'A'.repeat(32), '0'.repeat(31)]) assert.equal((await owner.api(`/datasets/${id}/multipart-uploads/${bad}`)).status, 404, bad);
      // A file past 5 TiB is refused before anything is made.
      assert.equal((await owner.api(`/datasets/${id}/multipart-uploads`, post({ path: 'huge', size: MAX_OBJECT_BYTES + 1 }))).status, 400);
      assert.ok((await owner.api(base, { method: 'DELETE' })).ok);
      await json(await owner.api(base), 404);
    });

    it('forgets an upload left unfinished past UPLOAD_STALE_AFTER_S, and the sweep deletes its parts', async () => {
      const file = randomBytes(6 * MIB);
      const started = await start(file, 'stale.edf');
      const [first] = await urls(started.upload_id, file, started, [1]);
      assert.ok((await put(first, partOf(file, started, 1))).ok);
      assert.equal(await sweepStaleUploads(server.deps), 0);
      server.clock.advance(server.config.uploadStaleAfterS * 1000 + 1000);
      await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}`), 404);
      assert.ok((await sweepStaleUploads(server.deps)) >= 1);
      const left: string[] = [];
      for await (const o of server.deps.objects.list(`uploads/${id}/`)) left.push(o.key);
      assert.deepEqual(left, []);
    });
  });
}

for (const variant of storeVariants) {
  // UPLOAD_COMPLETE_WAIT_MS=0: every completion answers 202 at once, as that of a large file does once the wait
  // (20 s) has passed: what follows is what a client sees of a completion that outlasts its request.
  describe(`a completion that outlasts its request, on the ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    let owner: TestAccount;
    let id: string;
    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      server = await startTestServer({ env: { ...s.env, UPLOAD_PART_SIZE: String(5 * MIB), UPLOAD_PART_THRESHOLD: String(5 * MIB), UPLOAD_COMPLETE_WAIT_MS: '0' } });
      owner = await createUploader(server);
      id = (await json(await owner.api('/datasets', post({ name: 'slow completions' })), 201)).id;
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    /** An upload of `file` with every part stored. */
    const uploaded = async (file: Buffer, path: string) => {
      const started = await json(await owner.api(`/datasets/${id}/multipart-uploads`, post({ path, size: file.length })), 200);
      const parts = Array.from({ length: started.part_count }, (_, i) => ({ part_number: i + 1, sha256: sha(file.subarray(i * started.part_size, (i + 1) * started.part_size)) }));
      const targets = (await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/part-urls`, post({ parts })), 200)).parts;
      for (const t of targets) {
        const body = file.subarray((t.part_number - 1) * started.part_size, t.part_number * started.part_size);
        const res = await fetch(t.url, { method: 'PUT', headers: { ...t.headers, 'content-length': String(body.length) }, body: new Uint8Array(body) });
        assert.ok(res.ok, `${res.status} ${await res.text()}`);
      }
      return started.upload_id as string;
    };
    const complete = (upload: string, sha256: string) => owner.api(`/datasets/${id}/multipart-uploads/${upload}/complete`, post({ sha256 }));
    /** Asks again while the answer is 202, as a client does; the first answer that is not. */
    const askUntilEnded = async (upload: string, sha256: string) => {
      for (let i = 0; i < 400; i++) {
        const res = await complete(upload, sha256);
        if (res.status !== 202) return res;
        assert.equal((await res.json()).status, 'completing');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.fail('the completion never ended');
    };

    it('answers 202 completing and goes on; asking again (many at once) gives its result, and the file is stored', async () => {
      const file = randomBytes(11 * MIB);
      const upload = await uploaded(file, 'sub-01/eeg/slow.edf');
      const first = await complete(upload, sha(file));
      assert.equal(first.status, 202);
      assert.deepEqual(await first.json(), { status: 'completing', path: 'sub-01/eeg/slow.edf', size: file.length, sha256: sha(file) });
      const answers = await Promise.all(Array.from({ length: 6 }, () => askUntilEnded(upload, sha(file))));
      for (const res of answers) assert.deepEqual(await json(res, 200), { path: 'sub-01/eeg/slow.edf', size: file.length, sha256: sha(file), status: 'stored' });
      assert.ok((await server.deps.objects.readAll(`${id}/objects/${sha(file)}`))!.equals(file));
      // The upload is over: its record and parts are gone.
      await json(await owner.api(`/datasets/${id}/multipart-uploads/${upload}`), 404);
    });

    it('tells a mismatch found after its 202 to the request that asks again, though the upload is gone, and stores nothing', async () => {
      const file = randomBytes(7 * MIB);
      const upload = await uploaded(file, 'sub-01/eeg/claimed.edf');
      const claimed = sha(Buffer.from('other bytes'));
      assert.equal((await complete(upload, claimed)).status, 202);
      const refused = await json(await askUntilEnded(upload, claimed), 400);
      assert.equal(refused.error, 'content_mismatch');
      assert.ok(refused.message.includes(sha(file)) && refused.message.includes(claimed), refused.message);
      await json(await owner.api(`/datasets/${id}/multipart-uploads/${upload}`), 404);
      assert.equal(await server.deps.objects.head(`${id}/objects/${sha(file)}`), undefined);
      assert.equal(await server.deps.objects.head(`${id}/objects/${claimed}`), undefined);
    });

    it('tells parts missing once (the next request, once they are sent, stores the file), and answers 409 while the store\'s upload is gone under its record (another node completing it)', async () => {
      const file = randomBytes(6 * MIB);
      const started = await json(await owner.api(`/datasets/${id}/multipart-uploads`, post({ path: 'late.edf', size: file.length })), 200);
      const incomplete = await json(await askUntilEnded(started.upload_id, sha(file)), 409);
      assert.equal(incomplete.error, 'upload_incomplete');
      const parts = [1, 2].map((n) => ({ part_number: n, sha256: sha(file.subarray((n - 1) * started.part_size, n * started.part_size)) }));
      for (const t of (await json(await owner.api(`/datasets/${id}/multipart-uploads/${started.upload_id}/part-urls`, post({ parts })), 200)).parts) {
        const body = file.subarray((t.part_number - 1) * started.part_size, t.part_number * started.part_size);
        assert.ok((await fetch(t.url, { method: 'PUT', headers: { ...t.headers, 'content-length': String(body.length) }, body: new Uint8Array(body) })).ok);
      }
      assert.equal((await json(await askUntilEnded(started.upload_id, sha(file)), 200)).status, 'stored');

      const other = randomBytes(6 * MIB);
      const upload = await uploaded(other, 'gone.edf');
      const record = JSON.parse((await server.deps.objects.readAll(`uploads/${id}/${upload}/upload.json`))!.toString('utf8'));
      await server.deps.objects.abortMultipart(`uploads/${id}/${upload}/object`, record.store_upload_id);
      const conflict = await json(await askUntilEnded(upload, sha(other)), 409);
      assert.equal(conflict.error, 'conflict');
      assert.match(conflict.message, /another request is completing this upload/);
    });
  });
}
