/**
 * Read grants end to end: `POST /datasets/:id/read-grant` issues them to whoever may read the dataset, and the
 * gateway reads a private dataset's objects with one, uncached and marked private, and answers everything
 * else (no grant, another dataset's grant, an expired or forged one, a deleted dataset) exactly as an
 * unknown dataset.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mintApiKey } from '../../src/accounts/api-keys.js';
import type { Visibility } from '../../src/db/datasets-tables.js';
import { READ_GRANT_SECONDS } from '../../src/datasets/read-grant.js';
import { createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, putZarrCopy, rawRequest, startStandaloneGateway, STORE, type RawAnswer, type StandaloneGateway } from './support.js';

const CHUNK = `${STORE}/eeg_250hz/0/c/0/0`;
const PRIVATE_ID = 'nd000811';
const OTHER_ID = 'nd000812';
const PUBLIC_ID = 'nd000813';
const UNKNOWN_ID = 'nd000899';

describe('read grants', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let admin: TestAccount;
  let chunk: Buffer;

  async function insert(id: string, visibility: Visibility): Promise<void> {
    await server.deps.db
      .insertInto('datasets')
      .values({ id, name: `Grant test ${id}`, owner_id: owner.user.id, visibility, source_repo: null, latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: 'ready', zarr_converted_at: null, zarr_store_count: 1, zarr_index_etag: null, zarr_source_commit: null })
      .execute();
    ({ chunk } = await putZarrCopy(server.deps.objects, id));
  }

  async function grantOf(account: TestAccount, id: string): Promise<{ grant: string; expires_at: string }> {
    const r = await account.api(`/datasets/${id}/read-grant`, { method: 'POST' });
    assert.equal(r.status, 200, await r.clone().text());
    return (await r.json()) as { grant: string; expires_at: string };
  }

  const read = (id: string, path: string, grant?: string, extra: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> =>
    rawRequest(server.url, `/zarrproxy/${id}/zarr/${path}`, { method, headers: { ...(grant ? { authorization: `Bearer ${grant}` } : {}), ...extra } });

  function assertUnknownDataset(answer: RawAnswer, unknown: RawAnswer, what: string): void {
    assert.equal(answer.status, 404, what);
    assert.deepEqual(JSON.parse(answer.body.toString()), JSON.parse(unknown.body.toString()), `${what}: the body of an unknown dataset`);
    assert.equal(answer.headers['cache-control'], unknown.headers['cache-control'], what);
    assert.equal(answer.headers['x-cache'], unknown.headers['x-cache'], what);
  }

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    stranger = await createAccount(server);
    admin = await createAccount(server, { role: 'admin' });
    await insert(PRIVATE_ID, 'private');
    await insert(OTHER_ID, 'private');
    await insert(PUBLIC_ID, 'public');
  });
  after(() => server?.close());

  it('gives the owner a grant of a few minutes, and reads the private chunk with it, uncached and private', async () => {
    const before = server.clock.now().getTime();
    const { grant, expires_at } = await grantOf(owner, PRIVATE_ID);
    const lifetime = new Date(expires_at).getTime() - before;
    assert.ok(lifetime > (READ_GRANT_SECONDS - 5) * 1000 && lifetime <= READ_GRANT_SECONDS * 1000 + 1000, `expires in ${lifetime} ms`);

    for (let i = 0; i < 2; i++) {
      const r = await read(PRIVATE_ID, CHUNK, grant);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, chunk);
      assert.equal(r.headers['cache-control'], 'private, no-store');
      assert.equal(r.headers['x-cache'], 'BYPASS', 'never a cache hit, not even the second time');
    }
    const ranged = await read(PRIVATE_ID, CHUNK, grant, { range: 'bytes=10-19' });
    assert.equal(ranged.status, 206);
    assert.deepEqual(ranged.body, chunk.subarray(10, 20));
    assert.equal(ranged.headers['cache-control'], 'private, no-store');
    const head = await read(PRIVATE_ID, 'index.json', grant, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['cache-control'], 'private, no-store');
    const missing = await read(PRIVATE_ID, `${STORE}/nothing/here`, grant);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['cache-control'], 'private, no-store');

    // What a grant read, the shared cache never holds: the same URL without it is still refused.
    const unknown = await read(UNKNOWN_ID, CHUNK);
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK), unknown, 'no grant after a grant read');
  });

  it('answers a grant of another dataset, an expired grant, a forged one or none exactly as an unknown dataset', async () => {
    const unknown = await read(UNKNOWN_ID, CHUNK);
    assert.equal(unknown.status, 404);
    const { grant } = await grantOf(owner, PRIVATE_ID);
    const other = (await grantOf(owner, OTHER_ID)).grant;
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK), unknown, 'no grant');
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, other), unknown, "another dataset's grant");
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, grant.replace(OTHER_ID, PRIVATE_ID).replace(PRIVATE_ID, OTHER_ID)), unknown, 'a grant with its id changed');
    const [prefix, id, expires, scope, sig] = grant.split('.');
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, [prefix, id, Number(expires) + 3600, scope, sig].join('.')), unknown, 'an expiry moved');
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, [prefix, id, expires, scope, sig!.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))].join('.')), unknown, 'a forged signature');
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, 'ndsg.garbage'), unknown, 'garbage');
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, owner.key), unknown, 'an API key is no grant');
    assertUnknownDataset(await read(UNKNOWN_ID, CHUNK, grant), unknown, 'a grant on an unknown dataset');

    assert.equal((await read(PRIVATE_ID, CHUNK, grant)).status, 200);
    server.clock.advance((READ_GRANT_SECONDS + 1) * 1000);
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, grant), unknown, 'an expired grant');
  });

  it('gives grants to admins and through a browser session, and to nobody who may not read the dataset', async () => {
    assert.equal((await read(PRIVATE_ID, CHUNK, (await grantOf(admin, PRIVATE_ID)).grant)).status, 200);
    const session = await createBrowserSession(server, owner.user);
    const viaSession = await session.fetch(`/datasets/${PRIVATE_ID}/read-grant`, { method: 'POST' });
    assert.equal(viaSession.status, 200);
    assert.equal(viaSession.headers.get('cache-control'), 'no-store');
    const { grant } = (await viaSession.json()) as { grant: string };
    assert.equal((await read(PRIVATE_ID, CHUNK, grant)).status, 200);
    assert.equal((await session.fetch(`/datasets/${PRIVATE_ID}/read-grant`, { method: 'POST' }, 'https://evil.example')).status, 403, 'a foreign page cannot mint one');

    const refused = await stranger.api(`/datasets/${PRIVATE_ID}/read-grant`, { method: 'POST' });
    assert.equal(refused.status, 404);
    assert.equal(((await refused.json()) as { error: string }).error, 'dataset_not_found');
    assert.equal((await stranger.api(`/datasets/${UNKNOWN_ID}/read-grant`, { method: 'POST' })).status, 404);
    assert.equal((await fetch(`${server.url}/datasets/${PRIVATE_ID}/read-grant`, { method: 'POST' })).status, 401);
    assert.equal((await stranger.api('/datasets/nope/read-grant', { method: 'POST' })).status, 400);
  });

  it('does not let a grant outlive a dataset made private or deleted', async () => {
    const strangers = (await grantOf(stranger, PUBLIC_ID)).grant;
    const owners = (await grantOf(owner, PRIVATE_ID)).grant;
    assert.equal((await read(PUBLIC_ID, CHUNK, strangers)).status, 200, 'a public dataset reads as before');
    const patched = await admin.api(`/datasets/${PUBLIC_ID}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
    assert.equal(patched.status, 200, await patched.text());
    const unknown = await read(UNKNOWN_ID, CHUNK);
    assertUnknownDataset(await read(PUBLIC_ID, CHUNK, strangers), unknown, 'a grant issued while public, after the dataset went private');

    assert.equal((await read(PRIVATE_ID, CHUNK, owners)).status, 200);
    const deleted = await admin.api(`/admin/datasets/${PRIVATE_ID}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200);
    // The objects may be gone too; put them back to show the grant itself no longer reads.
    await putZarrCopy(server.deps.objects, PRIVATE_ID);
    assertUnknownDataset(await read(PRIVATE_ID, CHUNK, owners), unknown, 'a deleted dataset');
  });
});

describe('read grants at a standalone nds gateway', () => {
  const SECRET = 'read-grant-test-secret-0123456789';
  const ID = 'nd000821';
  let api: TestServer;
  let gw: StandaloneGateway;
  let owner: TestAccount;

  before(async () => {
    // The API issues grants, the gateway checks them: they share OBJECT_SIGNING_SECRET (docs/configuration.md).
    gw = await startStandaloneGateway({ OBJECT_SIGNING_SECRET: SECRET });
    api = await startTestServer({ env: { OBJECT_SIGNING_SECRET: SECRET } });
    owner = await createAccount(api);
    await api.deps.db
      .insertInto('datasets')
      .values({ id: ID, name: 'Standalone grant', owner_id: owner.user.id, visibility: 'private', source_repo: null, latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: 'ready', zarr_converted_at: null, zarr_store_count: 1, zarr_index_etag: null, zarr_source_commit: null })
      .execute();
    await insertDataset(gw.deps.db, ID, 'private');
    // The two databases stand for the one a real API and gateway share: a grant names its account and the key
    // that asked for it by id, and the gateway asks whether that account may read the dataset through that key,
    // so the owner and the key must be the same rows in both.
    const gwOwner = await gw.deps.db.selectFrom('datasets').select('owner_id').where('id', '=', ID).executeTakeFirstOrThrow();
    assert.equal(gwOwner.owner_id, owner.user.id, 'the first account of each database');
    const key = await api.deps.db.selectFrom('api_keys').select('id').where('user_id', '=', owner.user.id).executeTakeFirstOrThrow();
    const gwKey = await mintApiKey(gw.deps.db, owner.user.id, 'test', 'admin');
    assert.equal(gwKey.row.id, key.id, 'the first key of each database');
    await putZarrCopy(gw.deps.objects, ID);
  });
  after(async () => {
    await api?.close();
    await gw?.close();
  });

  it('reads a private object on the node:http path with a grant the API issued, and nothing without it', async () => {
    const r = await owner.api(`/datasets/${ID}/read-grant`, { method: 'POST' });
    const { grant } = (await r.json()) as { grant: string };
    const granted = await rawRequest(gw.url, `/${ID}/zarr/${CHUNK}`, { headers: { authorization: `Bearer ${grant}`, origin: 'http://localhost:3000' } });
    assert.equal(granted.status, 200);
    assert.equal(granted.headers['cache-control'], 'private, no-store');
    assert.equal(granted.headers['x-cache'], 'BYPASS');
    assert.equal(granted.headers['access-control-allow-origin'], 'http://localhost:3000');
    assert.equal((await rawRequest(gw.url, `/${ID}/zarr/${CHUNK}`)).status, 404);
    const preflight = await rawRequest(gw.url, `/${ID}/zarr/${CHUNK}`, { method: 'OPTIONS', headers: { origin: 'http://localhost:3000', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, range' } });
    assert.equal(preflight.status, 204);
    assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/);
  });
});
