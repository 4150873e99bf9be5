/**
 * Content of datasets over real HTTP, on the folder store and on a real S3 server (radosgw): presigned
 * uploads bound to size and hash, scoped credentials, versions and manifests.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json, storeVariants } from './support.js';

const post = (body?: unknown) => ({ method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

for (const variant of storeVariants) {
  describe(`dataset content on the ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    let owner: TestAccount;
    let stranger: TestAccount;
    let id: string;
    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      server = await startTestServer({ env: s.env });
      owner = await createUploader(server);
      stranger = await createUploader(server);
      id = (await json(await owner.api('/datasets', post({ name: 'content' })), 201)).id;
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    const put = (target: { url: string; headers: Record<string, string> }, body: Uint8Array) =>
      fetch(target.url, { method: 'PUT', headers: { ...target.headers, 'content-length': String(body.length) }, body: new Uint8Array(body) });

    it('hands out presigned PUT URLs, then answers "present" for stored content', async () => {
      const a = Buffer.from('sub-01 eeg data '.repeat(1000));
      const { files } = await json(await owner.api(`/datasets/${id}/upload-urls`, post({ files: [{ path: 'sub-01/eeg/a.edf', size: a.length, sha256: sha(a) }] })), 200);
      assert.equal(files[0].status, 'upload');
      assert.ok(Date.parse(files[0].expires_at) - Date.now() > 3500_000);
      const res = await put(files[0], a);
      assert.ok(res.ok, `${res.status} ${await res.text()}`);
      const again = await json(await owner.api(`/datasets/${id}/upload-urls`, post({ files: [{ path: 'copy/a.edf', size: a.length, sha256: sha(a) }] })), 200);
      assert.deepEqual(again.files, [{ path: 'copy/a.edf', status: 'present' }]);
      assert.equal((await server.deps.objects.head(`${id}/objects/${sha(a)}`))?.size, a.length);
    });

    it('refuses an upload whose bytes or size differ from what was signed, and stores nothing', async () => {
      const good = Buffer.from('the real content of the file');
      const { files } = await json(await owner.api(`/datasets/${id}/upload-urls`, post({ files: [{ path: 'x.bin', size: good.length, sha256: sha(good) }] })), 200);
      const sameSize = Buffer.from('the fake content of the file');
      assert.equal(sameSize.length, good.length);
      const wrongHash = await put(files[0], sameSize);
      assert.ok(wrongHash.status >= 400 && wrongHash.status < 500, `wrong hash answered ${wrongHash.status}`);
      const longer = Buffer.concat([good, Buffer.from('!')]);
      const wrongSize = await put(files[0], longer).catch(() => undefined);
      assert.ok(!wrongSize || wrongSize.status >= 400, `wrong size answered ${wrongSize?.status}`);
      assert.equal(await server.deps.objects.head(`${id}/objects/${sha(good)}`), undefined);
      assert.equal(await server.deps.objects.head(`${id}/objects/${sha(sameSize)}`), undefined);
    });

    it('lets only the owner ask for upload URLs and credentials; a private dataset stays 404 to others', async () => {
      const f = { path: 'a', size: 1, sha256: sha(Buffer.from('a')) };
      assert.equal((await json(await stranger.api(`/datasets/${id}/upload-urls`, post({ files: [f] })), 404)).error, 'dataset_not_found');
      assert.equal((await json(await stranger.api(`/datasets/${id}/upload-credentials`, post()), 404)).error, 'dataset_not_found');
      assert.equal((await json(await fetch(`${server.url}/datasets/${id}/download-credentials`, post()), 404)).error, 'dataset_not_found');
      assert.equal((await json(await stranger.api(`/datasets/${id}/versions`), 404)).error, 'dataset_not_found');
      assert.equal((await json(await stranger.api(`/datasets/${id}/manifest`), 404)).error, 'dataset_not_found');
    });

    it("ends upload credentials with the key that asked for them, not with the account's other keys", async () => {
      const laptopKey = (await json(await owner.api('/auth/keys', post({ name: 'laptop' })), 201)).api_key as string;
      const laptop = (p: string, init?: RequestInit) => apiFetch(server, p, laptopKey, init);
      const fromLaptop = await json(await laptop(`/datasets/${id}/upload-credentials`, post()), 200);
      const fromOwner = await json(await owner.api(`/datasets/${id}/upload-credentials`, post()), 200);
      const put = (token: string, text: string) =>
        fetch(`${fromLaptop.endpoint}${id}/objects/${sha(Buffer.from(text))}`, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: text });
      assert.equal((await put(fromLaptop.token, 'from the laptop')).status, 200);
      assert.equal((await laptop('/auth/keys/current', { method: 'DELETE' })).status, 200);
      const refused = await put(fromLaptop.token, 'from the laptop, later');
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).error, 'signature_invalid');
      assert.equal(await server.deps.objects.head(`${id}/objects/${sha(Buffer.from('from the laptop, later'))}`), undefined);
      assert.equal((await put(fromOwner.token, 'from the other key')).status, 200);
    });

    it('scopes credentials to the dataset: refused outside the prefix, for the wrong access, and once expired', async () => {
      const other = (await json(await stranger.api('/datasets', post({ name: 'other' })), 201)).id;
      const up = await json(await owner.api(`/datasets/${id}/upload-credentials`, post()), 200);
      assert.equal(up.prefix, `${id}/objects/`);
      assert.ok(Date.parse(up.expires_at) > Date.now());
      const body = Buffer.from('via credentials');
      const inside = await fetch(`${up.endpoint}${id}/objects/${sha(body)}`, { method: 'PUT', headers: { authorization: `Bearer ${up.token}` }, body });
      assert.equal(inside.status, 200, await inside.text());
      // Other bytes of the same length sent to that content key leave the stored content as it was.
      const impostor = Buffer.from('via credentialZ');
      const again = await fetch(`${up.endpoint}${id}/objects/${sha(body)}`, { method: 'PUT', headers: { authorization: `Bearer ${up.token}` }, body: impostor });
      assert.equal(again.status, 200);
      assert.equal(((await again.json()) as { present?: boolean }).present, true);
      const stored = await server.deps.objects.get(`${id}/objects/${sha(body)}`);
      const kept: Buffer[] = [];
      for await (const chunk of stored!.body) kept.push(chunk as Buffer);
      assert.equal(Buffer.concat(kept).toString(), 'via credentials');
      // Nor does a body of another length, or of none declared (chunked), reach the store: an S3 store would
      // write it over the content and then drop the key when its hash came out wrong.
      const contentKey = `${id}/objects/${sha(body)}`;
      const store = server.deps.objects as { put: (...args: unknown[]) => Promise<unknown> };
      const realPut = store.put;
      const putsOfContent: unknown[] = [];
      store.put = function (this: unknown, key: unknown, ...rest: unknown[]) {
        if (key === contentKey) putsOfContent.push(key);
        return realPut.call(this, key, ...rest);
      };
      try {
        const longer = await fetch(`${up.endpoint}${contentKey}`, { method: 'PUT', headers: { authorization: `Bearer ${up.token}` }, body: 'via credentials, and more' });
        assert.equal(longer.status, 400);
        const refused = (await longer.json()) as { error: string; details: string[] };
        assert.equal(refused.error, 'content_mismatch');
        assert.match(refused.details[0]!, /is stored with 15 bytes/);
        const chunked = await fetch(`${up.endpoint}${contentKey}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${up.token}` },
          body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode('other bytes')), c.close()) }),
          duplex: 'half',
        } as RequestInit);
        assert.equal(chunked.status, 200);
        assert.equal(((await chunked.json()) as { present?: boolean }).present, true);
      } finally {
        store.put = realPut;
      }
      assert.deepEqual(putsOfContent, []);
      assert.equal((await server.deps.objects.head(contentKey))?.size, body.length);
      // An upload credential writes content keys only: a name under objects/ that no hash checks could pass for
      // content in a version's listing.
      const notContent = await fetch(`${up.endpoint}${id}/objects/junk/${sha(body)}`, { method: 'PUT', headers: { authorization: `Bearer ${up.token}` }, body });
      assert.equal(notContent.status, 403);
      assert.equal(((await notContent.json()) as { error: string }).error, 'signature_invalid');
      assert.equal(await server.deps.objects.head(`${id}/objects/junk/${sha(body)}`), undefined);
      const outside = await fetch(`${up.endpoint}${other}/objects/${sha(body)}`, { method: 'PUT', headers: { authorization: `Bearer ${up.token}` }, body });
      assert.equal(outside.status, 403);
      const manifestKey = await fetch(`${up.endpoint}${id}/versions/9.9.9/manifest.json`, { method: 'PUT', headers: { authorization: `Bearer ${up.token}` }, body });
      assert.equal(manifestKey.status, 403);
      assert.equal(await server.deps.objects.head(`${other}/objects/${sha(body)}`), undefined);

      const down = await json(await owner.api(`/datasets/${id}/download-credentials`, post()), 200);
      assert.equal(down.prefix, `${id}/`);
      const read = await fetch(`${down.endpoint}${id}/objects/${sha(body)}`, { headers: { authorization: `Bearer ${down.token}` } });
      assert.equal(await read.text(), 'via credentials');
      const write = await fetch(`${down.endpoint}${id}/objects/${sha(Buffer.from('x'))}`, { method: 'PUT', headers: { authorization: `Bearer ${down.token}` }, body: 'x' });
      assert.equal(write.status, 403);
      const elsewhere = await fetch(`${down.endpoint}${other}/objects/${sha(body)}`, { headers: { authorization: `Bearer ${down.token}` } });
      assert.equal(elsewhere.status, 403);
      server.clock.advance(3601_000);
      const late = await fetch(`${down.endpoint}${id}/objects/${sha(body)}`, { headers: { authorization: `Bearer ${down.token}` } });
      assert.equal(late.status, 403);
      server.clock.advance(-3601_000);
    });

    it('creates a version only when every content is stored, and serves its manifest', async () => {
      const a = Buffer.from('sub-01 eeg data '.repeat(1000));
      const missing = Buffer.from('never uploaded');
      const refused = await json(
        await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest: [{ path: 'sub-01/eeg/a.edf', size: a.length, sha256: sha(a) }, { path: 'b.txt', size: missing.length, sha256: sha(missing) }] })),
        409,
      );
      assert.equal(refused.error, 'content_missing');
      assert.deepEqual(refused.missing, ['b.txt']);
      const bad = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest: [{ path: '../etc/passwd', size: a.length, sha256: sha(a) }] })), 400);
      assert.equal(bad.error, 'validation_failed');
      assert.equal((await json(await owner.api(`/datasets/${id}/versions`, post({ version: 'one', manifest: [] })), 400)).error, 'validation_failed');

      const manifest = [
        { path: 'sub-01/eeg/a.edf', size: a.length, sha256: sha(a) },
        { path: 'copy/a.edf', size: a.length, sha256: sha(a) },
      ];
      const v = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest })), 201);
      assert.equal(v.version, '1.0.0');
      assert.equal(v.file_count, 2);
      assert.equal(v.size_bytes, 2 * a.length);
      const stored = await server.deps.objects.get(`${id}/versions/1.0.0/manifest.json`);
      const chunks: Buffer[] = [];
      for await (const c of stored!.body) chunks.push(c as Buffer);
      assert.equal(sha(Buffer.concat(chunks)), v.manifest_sha256);
      const served = await json(await owner.api(`/datasets/${id}/manifest`), 200);
      assert.deepEqual(served.files, [...manifest].sort((x, y) => x.path.localeCompare(y.path)));
      const d = await json(await owner.api(`/datasets/${id}`), 200);
      assert.deepEqual([d.latest_version, d.size_bytes], ['1.0.0', 2 * a.length]);
      assert.equal((await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest: [] })), 409)).error, 'version_exists');
      assert.equal((await json(await owner.api(`/datasets/${id}/manifest?version=2.0.0`), 404)).error, 'version_not_found');
    });

    it('lets exactly one of several concurrent creations of the same version win', async () => {
      const a = Buffer.from('sub-01 eeg data '.repeat(1000));
      const manifests = Array.from({ length: 6 }, (_, i) => [{ path: `race-${i}.edf`, size: a.length, sha256: sha(a) }]);
      const answers = await Promise.all(manifests.map((m) => owner.api(`/datasets/${id}/versions`, post({ version: '2.0.0', manifest: m }))));
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409]);
      const winner = answers.findIndex((r) => r.status === 201);
      const served = await json(await owner.api(`/datasets/${id}/manifest?version=2.0.0`), 200);
      assert.deepEqual(served.files.map((f: { path: string }) => f.path), [`race-${winner}.edf`]);
      const versions = await json(await fetch(`${server.url}/datasets/${id}/versions`, { headers: { authorization: `Bearer ${owner.key}` } }), 200);
      assert.deepEqual(versions.versions.map((x: { version: string }) => x.version), ['2.0.0', '1.0.0']);
      assert.equal((await json(await owner.api(`/datasets/${id}`), 200)).latest_version, '2.0.0');
    });

    it('refuses uploads to someone else\'s public dataset, and gives anyone download credentials for it', async () => {
      const admin = await createAccount(server, { role: 'admin' });
      const pub = (await json(await admin.api('/datasets', post({ name: 'public', visibility: 'public' })), 201)).id;
      const creds = await json(await fetch(`${server.url}/datasets/${pub}/download-credentials`, post()), 200);
      assert.equal(creds.access, 'read');
      assert.equal((await json(await owner.api(`/datasets/${pub}/upload-credentials`, post()), 403)).error, 'forbidden');
    });
  });
}
