/**
 * A Zarr copy at the object store's anonymous public base follows its dataset's visibility (decision 0016):
 * converted while private, nothing of it is readable there and its `index.json` names no `data_base`;
 * published, everything is readable by the time the approval answers; made private, nothing is by the time
 * that change answers. A sweep a crash interrupted is done again by the process's sweeper. On radosgw with
 * anonymous S3 requests (the AWS SDK without credentials) under the documented bucket policy, and on the
 * folder store, whose public base is the server's `/objects/`.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import { startCopySweeper } from '../../src/conversion/copy-exposure.js';
import { findSweepWant } from '../../src/conversion/copy-exposure-queries.js';
import { recordZarrReady } from '../../src/conversion/zarr-ready.js';
import { updateDatasetFields } from '../../src/datasets/dataset-queries.js';
import { parseS3Url } from '../../src/objects/s3-object-store.js';
import { publicReadPolicy } from '../../src/objects/public-read.js';
import type { TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json, storeVariants } from '../datasets/support.js';
import { fixtures } from './support.js';

const bids = path.join(fixtures, 'bids/emg_CustomBipolar');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const post = (body?: unknown) => ({ method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });

async function filesOf(root: string): Promise<{ path: string; bytes: Buffer }[]> {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.push({ path: path.relative(root, full).split(path.sep).join('/'), bytes: await readFile(full) });
  }
  return out;
}

/** What an anonymous reader gets at the store's public base: a status, and the bytes of a 200. */
interface PublicAnswer {
  status: number;
  bytes?: Buffer;
}

for (const variant of storeVariants) {
  describe(`a copy at the store's public base: ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    let owner: TestAccount;
    let admin: TestAccount;
    let anonymous: S3Client | undefined;
    let bucket: string | undefined;
    let id: string;
    /** Keys of the copy: index.json, a store's zarr.json, a chunk. */
    let keys: { index: string; meta: string; chunk: string };

    /** An anonymous GET of `key` at the public base: the AWS SDK with no credentials (S3), a plain GET (folder). */
    async function publicRead(key: string): Promise<PublicAnswer> {
      if (!anonymous) {
        const r = await fetch(`${server.url}/objects/${key}`);
        return r.status === 200 ? { status: 200, bytes: Buffer.from(await r.arrayBuffer()) } : { status: r.status, bytes: void (await r.arrayBuffer()) };
      }
      try {
        const r = await anonymous.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return { status: 200, bytes: Buffer.from(await r.Body!.transformToByteArray()) };
      } catch (err) {
        return { status: (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0 };
      }
    }

    async function stored(key: string): Promise<Buffer> {
      const bytes = await server.deps.objects.readAll(key);
      assert.ok(bytes, `${key} is stored`);
      return bytes;
    }

    const dataBase = async () => (JSON.parse((await stored(keys.index)).toString()) as { data_base: string | null }).data_base;

    /** Every key of the copy answers as a key that does not exist (S3: 403 AccessDenied; /objects: 404). */
    async function assertClosed(what: string): Promise<void> {
      const missing = await publicRead(`${id}/zarr/no/such/object`);
      assert.ok(missing.status === 403 || missing.status === 404, `a missing key answers ${missing.status}`);
      for (const key of Object.values(keys)) assert.deepEqual(await publicRead(key), missing, `${what}: ${key}`);
    }

    async function assertOpen(what: string): Promise<void> {
      for (const key of Object.values(keys)) {
        const answer = await publicRead(key);
        assert.equal(answer.status, 200, `${what}: ${key}`);
        assert.deepEqual(answer.bytes, await stored(key), `${what}: ${key}`);
      }
    }

    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      if (s.env.OBJECT_STORE_URL) {
        const loc = parseS3Url(s.env.OBJECT_STORE_URL);
        bucket = loc.bucket;
        // The policy docs/install.md tells operators to apply.
        const client = new S3Client({ region: loc.region, endpoint: loc.endpoint, forcePathStyle: true, credentials: { accessKeyId: loc.accessKeyId!, secretAccessKey: loc.secretAccessKey! } });
        await client.send(new PutBucketPolicyCommand({ Bucket: bucket, Policy: JSON.stringify(publicReadPolicy(bucket)) }));
        client.destroy();
        anonymous = new S3Client({
          region: loc.region,
          endpoint: loc.endpoint,
          forcePathStyle: true,
          credentials: { accessKeyId: '', secretAccessKey: '' },
          signer: { sign: async (request) => request },
        });
      }
      server = await startTestServer({ env: s.env });
      owner = await createUploader(server);
      admin = await createUploader(server, { role: 'admin' });
    });
    after(async () => {
      anonymous?.destroy();
      await server?.close();
      await cleanup?.();
    });

    it('converts a private dataset into a copy nobody reads at the public base, with no data_base', async () => {
      id = (await json(await owner.api('/datasets', post({ name: 'Custom bipolar EMG', description: 'Grip EMG of one subject.', license: 'CC0-1.0', authors: ['Ada Lovelace'] })), 201)).id;
      const files = await filesOf(bids);
      const manifest = files.map((f) => ({ path: f.path, size: f.bytes.length, sha256: sha(f.bytes) }));
      for (const f of files) await server.deps.objects.put(`${id}/objects/${sha(f.bytes)}`, f.bytes, { sha256: sha(f.bytes) });
      await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest })), 201);
      await server.worker!.idle();
      assert.equal((await json(await owner.api(`/datasets/${id}`), 200)).zarr_status, 'ready');

      const store = 'sub-01/emg/sub-01_task-holdWeight_emg.zarr';
      let chunk: string | undefined;
      for await (const o of server.deps.objects.list(`${id}/zarr/${store}/`)) if (!chunk && /\/c\/\d/.test(o.key)) chunk = o.key;
      assert.ok(chunk, 'the store has a chunk');
      keys = { index: `${id}/zarr/index.json`, meta: `${id}/zarr/${store}/zarr.json`, chunk };

      assert.equal(await dataBase(), null);
      await assertClosed('converted while private');
      const own = await owner.api(`/objects/${keys.chunk}`);
      assert.equal(own.status, 200, 'its owner reads it through the server');
      assert.deepEqual(Buffer.from(await own.arrayBuffer()), await stored(keys.chunk));
    });

    it('opens the copy by the time the publication is approved, and names it as data_base', async () => {
      const request = await json(await owner.api(`/datasets/${id}/publish/request`, post()), 201);
      const approved = await admin.api(`/admin/publish/${request.id}/approve`, post());
      assert.equal(approved.status, 200, await approved.clone().text());
      await assertOpen('published');
      const base = await dataBase();
      assert.equal(base, anonymous ? `${parseS3Url(process.env.TEST_S3_URL!).endpoint}/${bucket}/${id}/zarr` : `${server.url}/objects/${id}/zarr`);
      // data_base is a URL anyone reads with a plain, unsigned GET.
      const viaDataBase = await fetch(`${base}/${keys.chunk.slice(`${id}/zarr/`.length)}`);
      assert.equal(viaDataBase.status, 200);
      assert.deepEqual(Buffer.from(await viaDataBase.arrayBuffer()), await stored(keys.chunk));
      const dataset = await json(await owner.api(`/datasets/${id}`), 200);
      assert.equal(dataset.zarr_index_etag, (await server.deps.objects.head(keys.index))!.etag, 'the recorded entity tag follows the rewritten index');
    });

    it('closes the copy by the time it is made private, and takes data_base back', async () => {
      const patched = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
      assert.equal(patched.status, 200, await patched.text());
      await assertClosed('made private');
      assert.equal(await dataBase(), null);
    });

    /** A process that died holding the copy's lease: no sweep runs until it expires, a minute on. */
    async function deadHolder(): Promise<void> {
      await server.deps.db.updateTable('copy_exposures').set({ lease_holder: 'dead', lease_until: new Date(server.clock.now().getTime() + 60_000) }).where('dataset_id', '=', id).execute();
    }

    /** Until every wanted sweep of the copy is done (by whichever sweeper holds it). */
    async function settled(): Promise<void> {
      for (let i = 0; i < 200; i++) {
        const want = await findSweepWant(server.deps.db, id);
        if (want && want.doneSeq >= want.wantSeq) return;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.fail('the wanted sweep was not done within 20 s');
    }

    it('finishes at start-up a sweep that a crash interrupted, in either direction, once its lease has expired', async () => {
      // Published, and the process died before its sweep: the visibility is public, the copy still closed.
      await deadHolder();
      await updateDatasetFields(server.deps.db, id, { visibility: 'public' }, server.clock.now());
      await assertClosed('public, not swept yet');
      const early = startCopySweeper(server.deps, 3_600_000);
      await early.tick();
      await early.stop();
      await assertClosed('the lease of a dead holder, not expired yet');
      server.clock.advance(61_000);
      const sweeper = startCopySweeper(server.deps, 3_600_000);
      await sweeper.tick();
      await sweeper.stop();
      await settled();
      await assertOpen('swept at start-up');
      assert.notEqual(await dataBase(), null);

      // Made private, and the process died: the start-up sweep closes it.
      await deadHolder();
      await updateDatasetFields(server.deps.db, id, { visibility: 'private' }, server.clock.now());
      if (anonymous) await assertOpen('private, not swept yet');
      // Without the hook of this process, /objects answers "public" from memory for 60 s at most.
      server.clock.advance(61_000);
      const again = startCopySweeper(server.deps, 3_600_000);
      await again.tick();
      await again.stop();
      await settled();
      await assertClosed('swept at start-up');
      assert.equal(await dataBase(), null);
    });

    it("settles a private copy's index.json that another runner wrote public, when it reports ready", async () => {
      const index = JSON.parse((await stored(keys.index)).toString()) as Record<string, unknown>;
      await server.deps.objects.put(keys.index, JSON.stringify({ ...index, data_base: 'https://runner.example/copy' }), { contentType: 'application/json', publicRead: true });
      if (anonymous) assert.equal((await publicRead(keys.index)).status, 200, 'written public by the runner');
      const commit = index.source_commit as string;
      await recordZarrReady(server.deps, { dataset_id: id, status: 'ready', commit, store_count: 1, converted: [] });
      await settled();
      assert.equal(await dataBase(), null);
      await assertClosed('after the report');
    });
  });
}
