/**
 * `data_base` of a public dataset's `index.json` is where its Zarr copy is public without the gateway: by
 * default the object store's own public base (the folder store's `/objects/` under PUBLIC_URL; an S3 bucket's
 * path-style URL, under the bucket policy of docs/install.md), so that a client reads a chunk straight from
 * it. A private dataset's `index.json` names none.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
import { parseS3Url } from '../../src/objects/s3-object-store.js';
import { publicReadPolicy } from '../../src/objects/public-read.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { storeVariants } from '../datasets/support.js';
import { hostedSource, hostRepository, makeBidsRepo } from './support.js';

async function readText(server: TestServer, key: string): Promise<string> {
  const o = await server.deps.objects.get(key);
  assert.ok(o, `${key} is missing`);
  const chunks: Buffer[] = [];
  for await (const c of o.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function readBytes(server: TestServer, key: string): Promise<Buffer> {
  const o = await server.deps.objects.get(key);
  assert.ok(o);
  const chunks: Buffer[] = [];
  for await (const c of o.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Gives a fresh test bucket the policy a bucket behind `data_base` has: public copies are readable. */
async function makeBucketPublic(objectStoreUrl: string): Promise<void> {
  const loc = parseS3Url(objectStoreUrl);
  const client = new S3Client({ region: loc.region, endpoint: loc.endpoint, forcePathStyle: true, credentials: { accessKeyId: loc.accessKeyId!, secretAccessKey: loc.secretAccessKey! } });
  await client.send(new PutBucketPolicyCommand({ Bucket: loc.bucket, Policy: JSON.stringify(publicReadPolicy(loc.bucket)) }));
  client.destroy();
}

for (const variant of storeVariants) {
  describe(`index.json data_base: ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let admin: TestAccount;
    let repo: string;
    let env: Record<string, string>;
    let cleanup: () => Promise<void>;
    const id = 'nd000171';

    before(async () => {
      ({ env, cleanup } = await variant.setup());
      server = await startTestServer({ env });
      admin = await createAccount(server, { role: 'admin' });
      repo = hostRepository(server.config.gitDir, id, makeBidsRepo());
      await server.deps.db
        .insertInto('datasets')
        .values({ id, name: 'data_base test', owner_id: admin.user.id, visibility: 'public', source_repo: hostedSource, external_ids: [], latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null })
        .execute();
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
      if (repo) rmSync(repo, { recursive: true, force: true });
    });

    it('defaults to the object store public base, and a chunk reads through it', async () => {
      const res = await admin.api(`/admin/datasets/${id}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) });
      assert.equal(res.status, 202, await res.clone().text());
      await server.worker!.idle();

      const index = JSON.parse(await readText(server, `${id}/zarr/index.json`));
      assert.equal(index.store_count, 2);
      if (env.OBJECT_STORE_URL) {
        const loc = parseS3Url(env.OBJECT_STORE_URL);
        assert.equal(index.data_base, `${loc.endpoint}/${loc.bucket}/${id}/zarr`);
        // No credential of the store's URL leaks into the public index.
        assert.doesNotMatch(JSON.stringify(index), /secret|access_key/);
        await makeBucketPublic(env.OBJECT_STORE_URL);
      } else {
        assert.equal(index.data_base, `${server.url}/objects/${id}/zarr`);
      }

      const store = index.stores[0].zarr as string;
      let chunkKey: string | undefined;
      for await (const o of server.deps.objects.list(`${id}/zarr/${store}/`)) {
        if (/\/c\/\d/.test(o.key)) {
          chunkKey = o.key;
          break;
        }
      }
      assert.ok(chunkKey, 'the store has a chunk');
      const inStore = chunkKey.slice(`${id}/zarr/`.length);
      const viaDataBase = await fetch(`${index.data_base}/${inStore}`);
      assert.equal(viaDataBase.status, 200);
      assert.deepEqual(Buffer.from(await viaDataBase.arrayBuffer()), await readBytes(server, chunkKey));
      const meta = await fetch(`${index.data_base}/${store}/zarr.json`);
      assert.equal(meta.status, 200);
      assert.equal((await meta.json()).zarr_format, 3);
    });
  });
}

describe('index.json data_base: ZARR_PUBLIC_BASE_URL wins when set', () => {
  let server: TestServer;
  let admin: TestAccount;
  let repo: string;
  const id = 'nd000172';
  before(async () => {
    server = await startTestServer({ env: { ZARR_PUBLIC_BASE_URL: 'https://cdn.example.org/nds' } });
    admin = await createAccount(server, { role: 'admin' });
    repo = hostRepository(server.config.gitDir, id, makeBidsRepo());
    await server.deps.db
      .insertInto('datasets')
      .values({ id, name: 'data_base setting', owner_id: admin.user.id, visibility: 'public', source_repo: hostedSource, external_ids: [], latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null })
      .execute();
  });
  after(async () => {
    await server?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('data_base is the setting', async () => {
    const res = await admin.api(`/admin/datasets/${id}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) });
    assert.equal(res.status, 202);
    await server.worker!.idle();
    const index = JSON.parse(await readText(server, `${id}/zarr/index.json`));
    assert.equal(index.data_base, `https://cdn.example.org/nds/${id}/zarr`);
  });

  it('a private copy names no data_base, the setting notwithstanding', async (t) => {
    const privateId = 'nd000173';
    const privateRepo = hostRepository(server.config.gitDir, privateId, makeBidsRepo());
    t.after(() => rmSync(privateRepo, { recursive: true, force: true }));
    await server.deps.db
      .insertInto('datasets')
      .values({ id: privateId, name: 'private data_base', owner_id: admin.user.id, visibility: 'private', source_repo: hostedSource, external_ids: [], latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null })
      .execute();
    const res = await admin.api(`/admin/datasets/${privateId}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) });
    assert.equal(res.status, 202);
    await server.worker!.idle();
    const index = JSON.parse(await readText(server, `${privateId}/zarr/index.json`));
    assert.equal(index.store_count, 2);
    assert.equal(index.data_base, null);
  });
});
