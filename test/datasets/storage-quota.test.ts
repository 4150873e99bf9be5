/**
 * Storage quotas (decision 0051): every way bytes enter a dataset is granted against its owner's quota before
 * a byte is sent (upload URLs and git-lfs actions, uploads in parts, object credentials, pushes), a key granted
 * twice counts once, concurrent requests cannot pass the quota together, and room that was never used comes
 * back by the sweep. On the folder store (the S3 store presigns the same way; the ledger is the database's).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { measureUnrecordedRepositories, sweepStorageGrants } from '../../src/datasets/storage-quota.js';
import { repositoryBytes, repositoryDir } from '../../src/git/repository-dir.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, gitRun } from '../conversion/support.js';
import { createUploader, json, storeVariants } from './support.js';

const SANDBOX_QUOTA = 1_000_000;
const ACCOUNT_QUOTA = 3_000_000;
const post = (body?: unknown) => ({ method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
/** A content hash no test uploads: asking for its URL grants room, and nothing ever comes. */
const someHash = () => randomBytes(32).toString('hex');

describe('storage quotas', () => {
  let server: TestServer;
  let datasets = 0;
  before(async () => {
    server = await startTestServer({ env: { STORAGE_QUOTA_BYTES: String(ACCOUNT_QUOTA), SANDBOX_STORAGE_QUOTA_BYTES: String(SANDBOX_QUOTA) } });
  });
  after(async () => {
    await server?.close();
  });

  /** A fresh account owning a fresh sandbox dataset (and a real one when asked). */
  async function ownerWith(options: { real?: boolean; role?: 'admin' } = {}): Promise<{ owner: TestAccount; sandbox: string; real: string }> {
    const owner = await createUploader(server, { role: options.role });
    datasets++;
    const sandbox = `sb${String(datasets).padStart(6, '0')}`;
    const real = `nd${String(datasets).padStart(6, '0')}`;
    await insertDatasetRows(server.deps.db, [
      { id: sandbox, name: `sandbox ${datasets}`, owner_id: owner.user.id, visibility: 'private', sandbox: true },
      ...(options.real ? [{ id: real, name: `real ${datasets}`, owner_id: owner.user.id, visibility: 'private' as const }] : []),
    ]);
    return { owner, sandbox, real };
  }
  const askUrls = (who: TestAccount, id: string, files: Array<{ size: number; sha256?: string }>) =>
    who.api(`/datasets/${id}/upload-urls`, post({ files: files.map((f, i) => ({ path: `f${i}.bin`, size: f.size, sha256: f.sha256 ?? someHash() })) }));
  const storageOf = async (who: TestAccount) => json(await who.api('/users/me/storage'), 200);

  it('grants upload URLs up to the sandbox quota; a hash asked for again counts once; over it nothing is signed', async () => {
    const { owner, sandbox } = await ownerWith();
    const a = someHash();
    assert.equal((await json(await askUrls(owner, sandbox, [{ size: 600_000, sha256: a }]), 200)).files[0].status, 'upload');
    // The same content again (a retry, a second path): no more room taken.
    assert.equal((await json(await askUrls(owner, sandbox, [{ size: 600_000, sha256: a }]), 200)).files[0].status, 'upload');
    const refused = await json(await askUrls(owner, sandbox, [{ size: 300_000 }, { size: 200_000 }]), 403);
    assert.equal(refused.error, 'storage_quota_exceeded');
    assert.match(refused.details[0], /sandbox datasets hold 586 KiB of their 977 KiB; this needs 488 KiB more/);
    assert.deepEqual([refused.used_bytes, refused.quota_bytes, refused.asked_bytes], [600_000, SANDBOX_QUOTA, 500_000]);
    // Up to the quota exactly.
    assert.equal((await json(await askUrls(owner, sandbox, [{ size: 400_000 }]), 200)).files[0].status, 'upload');
    assert.equal((await askUrls(owner, sandbox, [{ size: 1 }])).status, 403);
    assert.deepEqual(await storageOf(owner), { used_bytes: SANDBOX_QUOTA, quota_bytes: ACCOUNT_QUOTA, sandbox: { used_bytes: SANDBOX_QUOTA, quota_bytes: SANDBOX_QUOTA } });
  });

  it("the account's quota counts its real and sandbox datasets together; an administrator's datasets are not limited", async () => {
    const { owner, sandbox, real } = await ownerWith({ real: true });
    await json(await askUrls(owner, sandbox, [{ size: 900_000 }]), 200);
    await json(await askUrls(owner, real, [{ size: 2_100_000 }]), 200);
    const refused = await json(await askUrls(owner, real, [{ size: 1 }]), 403);
    assert.match(refused.details[0], /the account's datasets hold 2\.9 MiB of their 2\.9 MiB; this needs 1 bytes more/);
    const admin = await ownerWith({ role: 'admin', real: true });
    await json(await askUrls(admin.owner, admin.real, [{ size: 50 * 2 ** 30 }]), 200);
    assert.deepEqual(await storageOf(admin.owner), { used_bytes: 50 * 2 ** 30, quota_bytes: null, sandbox: { used_bytes: 0, quota_bytes: null } });
  });

  it("an administrator's limit for one account stands in for both settings, lower or higher; null goes back to them", async () => {
    const { owner, sandbox } = await ownerWith();
    const admin = await createAccount(server, { role: 'admin' });
    const setLimit = async (bytes: number | null) =>
      json(await admin.api(`/admin/users/${owner.user.username}/storage-quota`, post({ quota_bytes: bytes })), 200);
    assert.equal((await setLimit(2_500_000)).sandbox.quota_bytes, 2_500_000);
    await json(await askUrls(owner, sandbox, [{ size: 2_000_000 }]), 200);
    assert.match((await json(await askUrls(owner, sandbox, [{ size: 600_000 }]), 403)).details[0], /hold 1\.9 MiB of their 2\.4 MiB/);
    await setLimit(null);
    // Back to the settings: the sandbox's 1,000,000 is passed already, so nothing more is granted (nothing taken away).
    assert.equal((await askUrls(owner, sandbox, [{ size: 1 }])).status, 403);
    assert.deepEqual(await storageOf(owner), { used_bytes: 2_000_000, quota_bytes: ACCOUNT_QUOTA, sandbox: { used_bytes: 2_000_000, quota_bytes: SANDBOX_QUOTA } });
    await setLimit(0);
    await json(await askUrls(owner, sandbox, [{ size: 5_000_000 }]), 200);
    // Only an administrator sets it; to a member the route is as any admin route.
    assert.equal((await owner.api(`/admin/users/${owner.user.username}/storage-quota`, post({ quota_bytes: 0 }))).status, 403);
    assert.equal((await admin.api(`/admin/users/${owner.user.username}/storage-quota`, post({ quota_bytes: -1 }))).status, 400);
  });

  it('deleting a dataset frees what it held at once; what the account holds elsewhere stays', async () => {
    const { owner, sandbox, real } = await ownerWith({ real: true });
    await json(await askUrls(owner, sandbox, [{ size: 400_000 }, { size: 300_000 }]), 200);
    await json(await askUrls(owner, real, [{ size: 1_000_000 }]), 200);
    const admin = await createAccount(server, { role: 'admin' });
    assert.equal((await admin.api(`/admin/datasets/${sandbox}`, { method: 'DELETE' })).status, 200);
    assert.deepEqual(await storageOf(owner), { used_bytes: 1_000_000, quota_bytes: ACCOUNT_QUOTA, sandbox: { used_bytes: 0, quota_bytes: SANDBOX_QUOTA } });
  });

  it("a member refused for the owner's quota learns that the room is short, not what the owner's datasets hold", async () => {
    const { owner, real: hidden } = await ownerWith({ real: true });
    const { real: shared } = await ownerWith({ real: true });
    // Both datasets the same owner's: move the second one over.
    await server.deps.db.updateTable('datasets').set({ owner_id: owner.user.id }).where('id', '=', shared).execute();
    const member = await createAccount(server);
    await json(await owner.api(`/datasets/${shared}/members/${member.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'maintainer' }) }), 201);
    assert.equal((await member.api(`/datasets/${hidden}`)).status, 404);
    await json(await askUrls(owner, hidden, [{ size: 1_234_567 }]), 200);
    const toMember = await json(await askUrls(member, shared, [{ size: ACCOUNT_QUOTA }]), 403);
    assert.equal(toMember.error, 'storage_quota_exceeded');
    assert.equal(toMember.asked_bytes, ACCOUNT_QUOTA);
    assert.equal(toMember.used_bytes, undefined);
    assert.equal(toMember.quota_bytes, undefined);
    assert.deepEqual(toMember.details, [`the storage quota of ${shared}'s owner leaves too little room for this (2.9 MiB)`]);
    // The owner asking the same is told its numbers.
    const toOwner = await json(await askUrls(owner, shared, [{ size: ACCOUNT_QUOTA }]), 403);
    assert.deepEqual([toOwner.used_bytes, toOwner.quota_bytes], [1_234_567, ACCOUNT_QUOTA]);
    assert.match(toOwner.details[0], /the account's datasets hold 1\.2 MiB of their/);
  });

  it('content asked for again with a larger size is charged the difference', async () => {
    const { owner, sandbox } = await ownerWith();
    const x = someHash();
    await json(await askUrls(owner, sandbox, [{ size: 1, sha256: x }]), 200);
    await json(await askUrls(owner, sandbox, [{ size: 900_000, sha256: x }]), 200);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 900_000);
    assert.equal((await askUrls(owner, sandbox, [{ size: 200_000 }])).status, 403);
    // Asked again smaller, it keeps the larger grant.
    await json(await askUrls(owner, sandbox, [{ size: 5, sha256: x }]), 200);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 900_000);
  });

  it('git-lfs is refused with 507 and a message past the quota; no size past 5 TiB is taken anywhere', async () => {
    const { owner, sandbox } = await ownerWith();
    const batch = (size: number) =>
      fetch(`${server.url}/git/${sandbox}.git/info/lfs/objects/batch`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`nds:${owner.key}`).toString('base64')}`, 'content-type': 'application/vnd.git-lfs+json', accept: 'application/vnd.git-lfs+json' },
        body: JSON.stringify({ operation: 'upload', transfers: ['basic'], objects: [{ oid: someHash(), size }] }),
      });
    const ok = await batch(600_000);
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.ok(((await ok.json()) as { objects: Array<{ actions?: { upload?: unknown } }> }).objects[0]!.actions?.upload);
    const full = await batch(600_000);
    assert.equal(full.status, 507);
    assert.match(((await full.json()) as { message: string }).message, /storage quota.*sandbox datasets hold 586 KiB of their 977 KiB/);
    assert.equal((await batch(6 * 2 ** 40)).status, 400);
    assert.equal((await askUrls(owner, sandbox, [{ size: 6 * 2 ** 40 }])).status, 400);
    // A credential's write declaring more than an object may have is refused before anything is granted.
    const creds = await json(await owner.api(`/datasets/${sandbox}/upload-credentials`, post()), 200);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${creds.endpoint}${sandbox}/objects/${someHash()}`, { method: 'PUT', headers: { authorization: `Bearer ${creds.token}`, 'content-length': '10000000000000000000' } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    assert.equal(answer.status, 413, answer.body);
    assert.equal(JSON.parse(answer.body).error, 'payload_too_large');
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 600_000);
  });

  it('forty requests at once take no more than the quota between them', async () => {
    const { owner, sandbox } = await ownerWith();
    const answers = await Promise.all(Array.from({ length: 40 }, () => askUrls(owner, sandbox, [{ size: 100_000 }])));
    const statuses = answers.map((r) => r.status).sort();
    await Promise.all(answers.map((r) => r.text()));
    assert.deepEqual([statuses.filter((s) => s === 200).length, statuses.filter((s) => s === 403).length], [10, 30]);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, SANDBOX_QUOTA);
  });

  it('an upload in parts holds its size from its start; aborting it gives the room back; completing it moves it to its content', async () => {
    const { owner, sandbox } = await ownerWith();
    const uploads = `/datasets/${sandbox}/multipart-uploads`;
    const first = await json(await owner.api(uploads, post({ path: 'big.bin', size: 900_000 })), 200);
    assert.equal(first.status, 'parts');
    assert.equal((await json(await owner.api(uploads, post({ path: 'more.bin', size: 200_000 })), 403)).error, 'storage_quota_exceeded');
    assert.equal((await owner.api(`${uploads}/${first.upload_id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 0);

    // A file sent in parts and completed counts once, under its content, at its size: even when a URL for the
    // same content was first asked for with a size of 1.
    const bytes = randomBytes(700_000);
    await json(await askUrls(owner, sandbox, [{ size: 1, sha256: sha(bytes) }]), 200);
    const started = await json(await owner.api(uploads, post({ path: 'file.bin', size: bytes.length, sha256: sha(bytes) })), 200);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, bytes.length + 1);
    const parts: Array<{ part_number: number }> = Array.from({ length: started.part_count }, (_, i) => ({ part_number: i + 1 }));
    const bodies = parts.map((p) => bytes.subarray((p.part_number - 1) * started.part_size, p.part_number * started.part_size));
    const checksum = (b: Uint8Array) => (started.part_checksum === 'crc32' ? { crc32: crc32(b).toString(16).padStart(8, '0') } : { sha256: sha(b) });
    const urls = await json(await owner.api(`${uploads}/${started.upload_id}/part-urls`, post({ parts: parts.map((p, i) => ({ ...p, ...checksum(bodies[i]!) })) })), 200);
    for (const [i, target] of (urls.parts as Array<{ url: string; headers: Record<string, string> }>).entries()) {
      const res = await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(bodies[i]!) });
      assert.equal(res.status, 200, await res.text());
    }
    const done = await json(await owner.api(`${uploads}/${started.upload_id}/complete`, post({ sha256: sha(bytes) })), 200);
    assert.equal(done.status, 'stored');
    assert.equal((await storageOf(owner)).sandbox.used_bytes, bytes.length);
    const grants = await server.deps.db.selectFrom('storage_grants').select(['object_key', 'bytes', 'confirmed']).where('dataset_id', '=', sandbox).execute();
    assert.deepEqual(grants, [{ object_key: `objects/${sha(bytes)}`, bytes: bytes.length, confirmed: true }]);
  });

  it("resetting the sandbox frees an unfinished upload's room and deletes its parts with it", async () => {
    const owner = await createUploader(server);
    for (let round = 0; round < 2; round++) {
      // Ids apart from the other tests' (which insert rows past the id sequence).
      const id = `sb09000${round}`;
      await insertDatasetRows(server.deps.db, { id, name: `reset round ${round}`, owner_id: owner.user.id, visibility: 'private', sandbox: true });
      const uploads = `/datasets/${id}/multipart-uploads`;
      const bytes = randomBytes(900_000);
      const started = await json(await owner.api(uploads, post({ path: 'big.bin', size: bytes.length })), 200);
      const bodies = Array.from({ length: started.part_count }, (_, i) => bytes.subarray(i * started.part_size, (i + 1) * started.part_size));
      const checksum = (b: Uint8Array) => (started.part_checksum === 'crc32' ? { crc32: crc32(b).toString(16).padStart(8, '0') } : { sha256: sha(b) });
      const urls = await json(await owner.api(`${uploads}/${started.upload_id}/part-urls`, post({ parts: bodies.map((b, i) => ({ part_number: i + 1, ...checksum(b) })) })), 200);
      for (const [i, target] of (urls.parts as Array<{ url: string; headers: Record<string, string> }>).entries()) {
        assert.equal((await fetch(target.url, { method: 'PUT', headers: target.headers, body: new Uint8Array(bodies[i]!) })).status, 200);
      }
      let held = 0;
      for await (const o of server.deps.objects.list(`uploads/${id}/`)) held += o.size;
      assert.ok(held >= bytes.length, `the parts are stored (${held} bytes)`);
      await json(await owner.api('/sandbox/reset', post()), 200);
      assert.equal((await storageOf(owner)).sandbox.used_bytes, 0);
      const left: string[] = [];
      for await (const o of server.deps.objects.list(`uploads/${id}/`)) left.push(o.key);
      assert.deepEqual(left, [], 'nothing of the upload is left in the store');
    }
  });

  it("a version's manifest counts at its stored size; one past the quota is refused and nothing is written", async () => {
    const { owner, sandbox } = await ownerWith();
    const one = Buffer.from('x');
    const [target] = (await json(await askUrls(owner, sandbox, [{ size: 1, sha256: sha(one) }]), 200)).files;
    assert.equal((await fetch(target.url, { method: 'PUT', headers: target.headers, body: one })).status, 200);
    const manifest = (n: number) => Array.from({ length: n }, (_, i) => ({ path: `sub-${String(i).padStart(5, '0')}/same-content.txt`, size: 1, sha256: sha(one) }));
    // 10,000 entries: about 1.1 MB of manifest, past the sandbox quota of 1 MB.
    const refused = await json(await owner.api(`/datasets/${sandbox}/versions`, post({ version: '1.0.0', manifest: manifest(10_000) })), 403);
    assert.equal(refused.error, 'storage_quota_exceeded');
    assert.equal((await owner.api(`/datasets/${sandbox}/versions/1.0.0`)).status, 404);
    assert.equal(await server.deps.objects.head(`${sandbox}/versions/1.0.0/manifest.json`), undefined);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 1);
    // 2,000 entries fit, and count as the manifest the store holds.
    await json(await owner.api(`/datasets/${sandbox}/versions`, post({ version: '1.0.0', manifest: manifest(2_000) })), 201);
    const stored = await server.deps.objects.head(`${sandbox}/versions/1.0.0/manifest.json`);
    assert.ok(stored && stored.size > 100_000);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 1 + stored.size);
  });

  it('the room of a write still arriving is kept past the sweep, by credential or by URL', async () => {
    const { owner, sandbox } = await ownerWith();
    const hours = (h: number) => ({ ...server.deps, clock: { now: () => new Date(Date.now() + h * 3600_000) } });
    const grantOf = (bytes: Uint8Array) => server.deps.db.selectFrom('storage_grants').select(['bytes', 'confirmed']).where('dataset_id', '=', sandbox).where('object_key', '=', `objects/${sha(bytes)}`).executeTakeFirst();
    /** A PUT whose body comes in two pieces; the second when `finish` is called. Answers its status. */
    const trickle = (url: string, headers: Record<string, string>, bytes: Uint8Array) => {
      const req = http.request(url, { method: 'PUT', headers: { ...headers, 'content-length': String(bytes.length) } });
      const status = new Promise<number>((resolve, reject) => {
        req.on('response', (res) => (res.resume(), res.on('end', () => resolve(res.statusCode!))));
        req.on('error', reject);
      });
      req.write(bytes.subarray(0, 1000));
      return { status, finish: () => req.end(bytes.subarray(1000)) };
    };
    const creds = await json(await owner.api(`/datasets/${sandbox}/upload-credentials`, post()), 200);
    for (const via of ['credential', 'url'] as const) {
      const slow = new Uint8Array(randomBytes(900_000));
      let put: ReturnType<typeof trickle>;
      if (via === 'credential') {
        put = trickle(`${creds.endpoint}${sandbox}/objects/${sha(slow)}`, { authorization: `Bearer ${creds.token}` }, slow);
      } else {
        const [target] = (await json(await askUrls(owner, sandbox, [{ size: slow.length, sha256: sha(slow) }]), 200)).files;
        put = trickle(target.url, target.headers, slow);
      }
      // The write has begun (its room granted, and held) once the first piece is in.
      for (let waited = 0; !(await grantOf(slow)) || (await server.deps.db.selectFrom('storage_grants').select('expires_at').where('dataset_id', '=', sandbox).where('object_key', '=', `objects/${sha(slow)}`).executeTakeFirstOrThrow()).expires_at.getTime() < Date.now() + 20 * 3600_000; waited += 50) {
        assert.ok(waited < 10_000, `the ${via} write's grant is held`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Two and a half hours on, the sweep leaves its room alone: no other write may take it.
      await sweepStorageGrants(hours(2.5));
      assert.ok(await grantOf(slow), 'the sweep left its grant');
      assert.equal((await askUrls(owner, sandbox, [{ size: 900_000 }])).status, 403);
      put.finish();
      assert.equal(await put.status, 200);
      assert.deepEqual(await grantOf(slow), { bytes: 900_000, confirmed: true });
      assert.equal((await storageOf(owner)).sandbox.used_bytes, 900_000);
      await server.deps.objects.delete(`${sandbox}/objects/${sha(slow)}`);
      await server.deps.db.deleteFrom('storage_grants').where('dataset_id', '=', sandbox).execute();
    }
  });

  it('content found stored without a grant (a presigned PUT that outlived the sweep) counts once it is seen', async () => {
    const { owner, sandbox } = await ownerWith();
    const bytes = randomBytes(400_000);
    // As the S3 store would hold it, the ledger knowing nothing.
    await server.deps.objects.put(`${sandbox}/objects/${sha(bytes)}`, bytes, { sha256: sha(bytes) });
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 0);
    assert.equal((await json(await askUrls(owner, sandbox, [{ size: bytes.length, sha256: sha(bytes) }]), 200)).files[0].status, 'present');
    assert.equal((await storageOf(owner)).sandbox.used_bytes, bytes.length);
    // And when a version lists it without asking first.
    await server.deps.db.deleteFrom('storage_grants').where('dataset_id', '=', sandbox).execute();
    await json(await owner.api(`/datasets/${sandbox}/versions`, post({ version: '1.0.0', manifest: [{ path: 'a.bin', size: bytes.length, sha256: sha(bytes) }] })), 201);
    const manifest = await server.deps.objects.head(`${sandbox}/versions/1.0.0/manifest.json`);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, bytes.length + manifest!.size);
  });

  it('an object credential writes only with Content-Length, and over the quota stores nothing', async () => {
    const { owner, sandbox } = await ownerWith();
    const creds = await json(await owner.api(`/datasets/${sandbox}/upload-credentials`, post()), 200);
    const putWith = (body: Uint8Array | ReadableStream) =>
      fetch(`${creds.endpoint}${sandbox}/objects/${sha(body instanceof Uint8Array ? body : new Uint8Array())}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${creds.token}` },
        body,
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      } as RequestInit);
    const big = randomBytes(SANDBOX_QUOTA + 1);
    const over = await putWith(new Uint8Array(big));
    assert.equal(over.status, 403);
    assert.equal(((await over.json()) as { error: string }).error, 'storage_quota_exceeded');
    assert.equal(await server.deps.objects.head(`${sandbox}/objects/${sha(big)}`), undefined);
    const chunked = await putWith(new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode('some bytes')), c.close()) }));
    assert.equal(chunked.status, 411);
    assert.equal(((await chunked.json()) as { error: string }).error, 'length_required');
    const small = new Uint8Array(randomBytes(1000));
    const stored = await putWith(small);
    assert.equal(stored.status, 200, await stored.text());
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 1000);
  });

  it('content stored through the server counts as stored; room of URLs that expired unused comes back by the sweep', async () => {
    const { owner, sandbox } = await ownerWith();
    const body = new Uint8Array(randomBytes(5000));
    const [target] = (await json(await askUrls(owner, sandbox, [{ size: body.length, sha256: sha(body) }]), 200)).files;
    assert.equal((await fetch(target.url, { method: 'PUT', headers: target.headers, body })).status, 200);
    await json(await askUrls(owner, sandbox, [{ size: 700_000 }]), 200);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 705_000);
    // Before the URL's hour and the sweep's grace have passed, nothing moves.
    assert.equal(await sweepStorageGrants(server.deps), 0);
    const later = { ...server.deps, clock: { now: () => new Date(Date.now() + 2.5 * 3600_000) } };
    assert.ok((await sweepStorageGrants(later)) >= 1);
    assert.equal((await storageOf(owner)).sandbox.used_bytes, 5000);
    // Room given back is room to use.
    await json(await askUrls(owner, sandbox, [{ size: 900_000 }]), 200);
  });

  it("a push sends no more than the owner's room; the repository is then counted by its size on disk", async () => {
    const { owner, sandbox } = await ownerWith();
    const remote = () => {
      const u = new URL(`${server.url}/git/${sandbox}.git`);
      u.username = 'nds';
      u.password = owner.key;
      return u.toString();
    };
    const repo = mkdtempSync(path.join(os.tmpdir(), 'nds-quota-repo-'));
    try {
      writeFileSync(path.join(repo, 'dataset_description.json'), JSON.stringify({ Name: 'quota', BIDSVersion: '1.9.0' }));
      gitIn(repo, 'init', '-q', '-b', 'main');
      gitIn(repo, 'add', '-A');
      gitIn(repo, 'commit', '-q', '-m', 'small');
      const smallCommit = gitIn(repo, 'rev-parse', 'HEAD');
      const small = await gitRun(repo, 'push', '-q', remote(), 'main');
      assert.equal(small.status, 0, small.stderr);
      const dir = repositoryDir(server.deps.config.gitDir, sandbox);
      await waitFor(async () => (await grantOf(sandbox, 'git')) === (await repositoryBytes(dir)));

      // 1.2 MB that do not compress: more than the sandbox's room.
      writeFileSync(path.join(repo, 'noise.bin'), randomBytes(1_200_000));
      gitIn(repo, 'add', '-A');
      gitIn(repo, 'commit', '-q', '-m', 'large');
      const large = await gitRun(repo, 'push', '-q', remote(), 'main');
      assert.notEqual(large.status, 0, 'a push past the quota was taken');
      assert.match(large.stderr, /maximum allowed size|unpack|rejected|failed/i);
      assert.equal(gitIn(dir, 'rev-parse', 'refs/heads/main'), smallCommit);
      assert.equal(await grantOf(sandbox, 'git'), await repositoryBytes(dir));
      // Each push's room was granted while it ran, and given back at its end.
      await waitFor(async () => (await pushGrants(sandbox)) === 0);

      // 1.2 MB of zeros pack into a few kilobytes: the push is taken, but the version that would copy them
      // whole into the store is refused, and nothing is copied.
      gitIn(repo, 'reset', '-q', '--hard', smallCommit);
      writeFileSync(path.join(repo, 'zeros.bin'), Buffer.alloc(1_200_000));
      gitIn(repo, 'add', '-A');
      gitIn(repo, 'commit', '-q', '-m', 'zeros');
      const zeros = await gitRun(repo, 'push', '-q', '-f', remote(), 'main');
      assert.equal(zeros.status, 0, zeros.stderr);
      await waitFor(async () => (await pushGrants(sandbox)) === 0);
      const refused = await json(await owner.api(`/datasets/${sandbox}/versions`, post({ version: '1.0.0', commit: 'main' })), 403);
      assert.equal(refused.error, 'storage_quota_exceeded');
      assert.equal(await server.deps.objects.head(`${sandbox}/objects/${sha(Buffer.alloc(1_200_000))}`), undefined);
      // A small file from git is copied, and counted at its size once stored.
      gitIn(repo, 'rm', '-q', 'zeros.bin');
      writeFileSync(path.join(repo, 'README'), 'a small file kept in git itself\n');
      gitIn(repo, 'add', '-A');
      gitIn(repo, 'commit', '-q', '-m', 'readme');
      assert.equal((await gitRun(repo, 'push', '-q', '-f', remote(), 'main')).status, 0);
      await waitFor(async () => (await pushGrants(sandbox)) === 0);
      await json(await owner.api(`/datasets/${sandbox}/versions`, post({ version: '1.0.0', commit: 'main' })), 201);
      assert.equal(await grantOf(sandbox, `objects/${sha(Buffer.from('a small file kept in git itself\n'))}`), 32);
      assert.ok((await storageOf(owner)).sandbox.used_bytes < SANDBOX_QUOTA);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it('a repository pushed before the ledger is measured when the server starts, once', async () => {
    const { owner, sandbox } = await ownerWith();
    const dir = repositoryDir(server.deps.config.gitDir, sandbox);
    gitIn(os.tmpdir(), 'init', '-q', '--bare', dir);
    writeFileSync(path.join(dir, 'objects', 'pack', 'pack-old.pack'), randomBytes(300_000));
    assert.equal(await grantOf(sandbox, 'git'), undefined);
    assert.ok((await measureUnrecordedRepositories(server.deps)) >= 1);
    assert.equal(await grantOf(sandbox, 'git'), await repositoryBytes(dir));
    assert.ok((await storageOf(owner)).sandbox.used_bytes > 300_000);
    assert.equal(await measureUnrecordedRepositories(server.deps), 0);
  });

  async function pushGrants(datasetId: string): Promise<number> {
    return (await server.deps.db.selectFrom('storage_grants').select('object_key').where('dataset_id', '=', datasetId).where('object_key', 'like', 'push/%').execute()).length;
  }

  async function grantOf(datasetId: string, key: string): Promise<number | undefined> {
    const row = await server.deps.db.selectFrom('storage_grants').select('bytes').where('dataset_id', '=', datasetId).where('object_key', '=', key).executeTakeFirst();
    return row ? Number(row.bytes) : undefined;
  }
});

/** Polls `check` until it holds (the repository's size is recorded once git has exited, after the answer). */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let waited = 0; !(await check()); waited += 50) {
    assert.ok(waited < 10_000, 'the condition did not come to hold in 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const variant of storeVariants) {
  describe(`storage quotas: the sweep on the ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      server = await startTestServer({ env: { ...s.env, SANDBOX_STORAGE_QUOTA_BYTES: String(SANDBOX_QUOTA) } });
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    it('keeps counting content that came to its presigned URL (the store, not nds, took it), and gives back the room of a URL never used', async () => {
      const owner = await createUploader(server);
      const id = 'sb000001';
      await insertDatasetRows(server.deps.db, { id, name: 'sweep', owner_id: owner.user.id, visibility: 'private', sandbox: true });
      const body = new Uint8Array(randomBytes(20_000));
      const unused = someHash();
      const { files } = await json(
        await owner.api(`/datasets/${id}/upload-urls`, post({ files: [{ path: 'a.bin', size: body.length, sha256: sha(body) }, { path: 'b.bin', size: 900_000, sha256: unused }] })),
        200,
      );
      const sent = await fetch(files[0].url, { method: 'PUT', headers: { ...files[0].headers, 'content-length': String(body.length) }, body });
      assert.ok(sent.ok, `${sent.status} ${await sent.text()}`);
      // Full until the sweep has looked.
      assert.equal((await owner.api(`/datasets/${id}/upload-urls`, post({ files: [{ path: 'c.bin', size: 100_000, sha256: someHash() }] }))).status, 403);
      const later = { ...server.deps, clock: { now: () => new Date(Date.now() + 2.5 * 3600_000) } };
      assert.equal(await sweepStorageGrants(later), 1);
      const grants = await server.deps.db.selectFrom('storage_grants').select(['object_key', 'bytes', 'confirmed']).where('dataset_id', '=', id).execute();
      assert.deepEqual(grants, [{ object_key: `objects/${sha(body)}`, bytes: body.length, confirmed: true }]);
      // A second sweep leaves the confirmed content alone.
      assert.equal(await sweepStorageGrants(later), 0);
      assert.equal((await json(await owner.api('/users/me/storage'), 200)).sandbox.used_bytes, body.length);
    });
  });
}
