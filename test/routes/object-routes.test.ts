/**
 * `/objects/<key>` keeps private datasets private: a private or sandbox dataset's Zarr copy (index.json, its
 * stores' zarr.json, chunks) answers its owner, admins and read-grant holders, and everyone else exactly as an
 * unknown id. Credentials minted while a dataset was public (download credentials, git-lfs download URLs,
 * read grants) stop reading when it is made private or deleted, or when their holder loses access. On the
 * folder store and on radosgw.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { storeVariants } from '../datasets/support.js';
import { putZarrCopy, STORE } from '../gateway/support.js';

const CHUNK = `${STORE}/eeg_250hz/0/c/0/0`;
const COPY_PATHS = ['index.json', `${STORE}/zarr.json`, CHUNK];
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Answer {
  status: number;
  body: string;
  contentType: string | null;
}

async function answerOf(res: Response): Promise<Answer> {
  return { status: res.status, body: await res.text(), contentType: res.headers.get('content-type') };
}

describe('/objects of a private copy', () => {
  let server: TestServer;
  let owner: TestAccount;
  let admin: TestAccount;
  let stranger: TestAccount;
  let chunk: Buffer;
  const PRIVATE_ID = 'nd000701';
  const SANDBOX_ID = 'sb000702';
  const PUBLIC_ID = 'nd000703';
  const UNKNOWN_ID = 'nd000799';

  const get = (id: string, p: string, headers: Record<string, string> = {}) => fetch(`${server.url}/objects/${id}/zarr/${p}`, { headers });

  /** The answer for `id` is the unknown id's, byte for byte once the id in it is the unknown one's. */
  async function assertAsUnknown(id: string, p: string, headers: Record<string, string>, what: string): Promise<void> {
    const unknown = await answerOf(await get(UNKNOWN_ID, p, headers));
    const answer = await answerOf(await get(id, p, headers));
    assert.equal(unknown.status, 404, `${what}: an unknown id answers 404`);
    assert.deepEqual({ ...answer, body: answer.body.replaceAll(id, UNKNOWN_ID) }, unknown, `${what}: ${id}/zarr/${p} answers as an unknown id`);
  }

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    admin = await createAccount(server, { role: 'admin' });
    stranger = await createAccount(server);
    await insertDatasetRows(server.deps.db, [
      { id: PRIVATE_ID, name: 'private copy', owner_id: owner.user.id, visibility: 'private', zarr_status: 'ready' },
      { id: SANDBOX_ID, name: 'sandbox copy', owner_id: owner.user.id, visibility: 'private', sandbox: true, zarr_status: 'ready' },
      { id: PUBLIC_ID, name: 'public copy', owner_id: owner.user.id, visibility: 'public', zarr_status: 'ready' },
    ]);
    for (const id of [PRIVATE_ID, SANDBOX_ID, PUBLIC_ID]) ({ chunk } = await putZarrCopy(server.deps.objects, id));
  });
  after(() => server?.close());

  it('answers a stranger who asks for a private or sandbox copy exactly as for an unknown id', async () => {
    const session = await createBrowserSession(server, stranger.user);
    for (const id of [PRIVATE_ID, SANDBOX_ID]) {
      for (const p of COPY_PATHS) {
        await assertAsUnknown(id, p, {}, 'anonymous');
        await assertAsUnknown(id, p, { range: 'bytes=0-9' }, 'anonymous, with Range');
        await assertAsUnknown(id, p, { authorization: `Bearer ${stranger.key}` }, "a stranger's API key");
        await assertAsUnknown(id, p, { cookie: session.cookie }, "a stranger's session");
      }
    }
  });

  it("answers a stranger's credentials of another dataset exactly as no credential", async () => {
    const { token } = (await (await stranger.api(`/datasets/${PUBLIC_ID}/download-credentials`, { method: 'POST' })).json()) as { token: string };
    const { grant } = (await (await stranger.api(`/datasets/${PUBLIC_ID}/read-grant`, { method: 'POST' })).json()) as { grant: string };
    for (const p of COPY_PATHS) {
      await assertAsUnknown(PRIVATE_ID, p, { authorization: `Bearer ${token}` }, 'download credentials of a public dataset');
      await assertAsUnknown(PRIVATE_ID, p, { authorization: `Bearer ${grant}` }, 'a read grant of a public dataset');
    }
  });

  it('serves the owner, an admin and a read-grant holder', async () => {
    const session = await createBrowserSession(server, owner.user);
    const { grant } = (await (await owner.api(`/datasets/${PRIVATE_ID}/read-grant`, { method: 'POST' })).json()) as { grant: string };
    const { token } = (await (await owner.api(`/datasets/${SANDBOX_ID}/download-credentials`, { method: 'POST' })).json()) as { token: string };
    const readers: Array<[string, string, Record<string, string>]> = [
      ["the owner's API key", PRIVATE_ID, { authorization: `Bearer ${owner.key}` }],
      ["the owner's browser session", PRIVATE_ID, { cookie: session.cookie }],
      ["an admin's API key", SANDBOX_ID, { authorization: `Bearer ${admin.key}` }],
      ['a read grant', PRIVATE_ID, { authorization: `Bearer ${grant}` }],
      ['download credentials', SANDBOX_ID, { authorization: `Bearer ${token}` }],
    ];
    for (const [who, id, headers] of readers) {
      const r = await get(id, CHUNK, headers);
      assert.equal(r.status, 200, who);
      assert.equal(r.headers.get('cache-control'), 'private, no-store', `${who}: kept by no shared cache`);
      assert.deepEqual(Buffer.from(await r.arrayBuffer()), chunk, who);
      const ranged = await get(id, CHUNK, { ...headers, range: 'bytes=10-19' });
      assert.equal(ranged.status, 206, who);
      assert.deepEqual(Buffer.from(await ranged.arrayBuffer()), chunk.subarray(10, 20), who);
      const index = await get(id, 'index.json', headers);
      assert.equal(index.status, 200, who);
      assert.equal(((await index.json()) as { dataset_id: string }).dataset_id, id, who);
    }
  });

  it('serves a public copy to anyone', async () => {
    for (const p of COPY_PATHS) assert.equal((await get(PUBLIC_ID, p)).status, 200, p);
    assert.deepEqual(Buffer.from(await (await get(PUBLIC_ID, CHUNK)).arrayBuffer()), chunk);
  });

  it('stops serving a copy to anyone the moment it is made private', async () => {
    const id = 'nd000704';
    await insertDatasetRows(server.deps.db, { id, name: 'soon private', owner_id: owner.user.id, visibility: 'public', zarr_status: 'ready' });
    await putZarrCopy(server.deps.objects, id);
    for (const p of COPY_PATHS) assert.equal((await get(id, p)).status, 200, `${p} while public`);
    const patched = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
    assert.equal(patched.status, 200, await patched.text());
    for (const p of COPY_PATHS) await assertAsUnknown(id, p, {}, 'made private');
    assert.equal((await get(id, CHUNK, { authorization: `Bearer ${owner.key}` })).status, 200, 'its owner still reads');
  });

  it('stops serving it within a second when another process made it private', async () => {
    const id = 'nd000705';
    await insertDatasetRows(server.deps.db, { id, name: 'private elsewhere', owner_id: owner.user.id, visibility: 'public', zarr_status: 'ready' });
    await putZarrCopy(server.deps.objects, id);
    assert.equal((await get(id, CHUNK)).status, 200, 'while public');
    // Another node's change reaches this process only through the database: no hook runs here.
    await server.deps.db.updateTable('datasets').set({ visibility: 'private' }).where('id', '=', id).execute();
    server.clock.advance(1001);
    for (const p of COPY_PATHS) await assertAsUnknown(id, p, {}, 'made private by another process');
  });
});

for (const variant of storeVariants) {
  describe(`credentials minted while a dataset was public: ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    let owner: TestAccount;
    let admin: TestAccount;
    let stranger: TestAccount;
    const content = Buffer.from('the bytes of an uploaded recording');

    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      server = await startTestServer({ env: s.env });
      owner = await createAccount(server);
      admin = await createAccount(server, { role: 'admin' });
      stranger = await createAccount(server);
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
    });

    /** A public dataset of `owner` with one uploaded file and a Zarr copy. */
    async function publicDataset(id: string): Promise<void> {
      await insertDatasetRows(server.deps.db, { id, name: `credentials ${id}`, owner_id: owner.user.id, visibility: 'public', zarr_status: 'ready' });
      await server.deps.objects.put(`${id}/objects/${sha(content)}`, content, { sha256: sha(content) });
      await putZarrCopy(server.deps.objects, id);
    }

    interface Minted {
      credentials: { token: string; endpoint: string };
      lfsUrl: string;
      grant: string;
    }

    /** What `account` (undefined: anyone) can get for a dataset: download credentials, a git-lfs download URL, a read grant. */
    async function mint(id: string, account: TestAccount | undefined): Promise<Minted> {
      const call = (p: string, init: RequestInit) => (account ? account.api(p, init) : fetch(`${server.url}${p}`, init));
      const credentials = (await (await call(`/datasets/${id}/download-credentials`, { method: 'POST' })).json()) as Minted['credentials'];
      assert.ok(credentials.token, 'download credentials');
      const basic: Record<string, string> = account ? { authorization: `Basic ${Buffer.from(`x:${account.key}`).toString('base64')}` } : {};
      const batch = await fetch(`${server.url}/git/${id}.git/info/lfs/objects/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.git-lfs+json', accept: 'application/vnd.git-lfs+json', ...basic },
        body: JSON.stringify({ operation: 'download', objects: [{ oid: sha(content), size: content.length }] }),
      });
      assert.equal(batch.status, 200, await batch.clone().text());
      const lfsUrl = ((await batch.json()) as { objects: Array<{ actions: { download: { href: string } } }> }).objects[0]!.actions.download.href;
      const grant = ((await (await call(`/datasets/${id}/read-grant`, { method: 'POST' })).json()) as { grant: string }).grant;
      return { credentials, lfsUrl, grant };
    }

    /** Which of the minted credentials still read the dataset's file and its copy. */
    async function stillReading(id: string, m: Minted): Promise<string[]> {
      const reading: string[] = [];
      const file = await fetch(`${m.credentials.endpoint}${id}/objects/${sha(content)}`, { headers: { authorization: `Bearer ${m.credentials.token}` } });
      if (file.status === 200 && (await file.text()) === content.toString()) reading.push('download credentials: file');
      const copy = await fetch(`${m.credentials.endpoint}${id}/zarr/index.json`, { headers: { authorization: `Bearer ${m.credentials.token}` } });
      if (copy.status === 200) reading.push('download credentials: index.json');
      await copy.body?.cancel();
      const lfs = await fetch(m.lfsUrl);
      if (lfs.status === 200 && (await lfs.text()) === content.toString()) reading.push('git-lfs download URL');
      const objectsGrant = await fetch(`${server.url}/objects/${id}/zarr/${CHUNK}`, { headers: { authorization: `Bearer ${m.grant}` } });
      if (objectsGrant.status === 200) reading.push('read grant at /objects');
      await objectsGrant.body?.cancel();
      const gatewayGrant = await fetch(`${server.url}/zarrproxy/${id}/zarr/${CHUNK}`, { headers: { authorization: `Bearer ${m.grant}` } });
      if (gatewayGrant.status === 200) reading.push('read grant at the gateway');
      await gatewayGrant.body?.cancel();
      return reading;
    }

    const ALL = ['download credentials: file', 'download credentials: index.json', 'git-lfs download URL', 'read grant at /objects', 'read grant at the gateway'];

    it('stop reading for everyone but the owner and admins once the dataset is made private', async () => {
      const id = 'nd000711';
      await publicDataset(id);
      const anyone = await mint(id, undefined);
      const strangers = await mint(id, stranger);
      const owners = await mint(id, owner);
      for (const m of [anyone, strangers, owners]) assert.deepEqual(await stillReading(id, m), ALL, 'all read while public');

      const patched = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
      assert.equal(patched.status, 200, await patched.text());
      assert.deepEqual(await stillReading(id, anyone), [], "anyone's credentials read nothing");
      assert.deepEqual(await stillReading(id, strangers), [], "a stranger's credentials read nothing");
      assert.deepEqual(await stillReading(id, owners), ALL, "the owner's still read");
    });

    it('stop reading when the key that asked for them is deleted, or the session is signed out or expires; those of another key read on', async () => {
      const id = 'nd000713';
      await publicDataset(id);
      const patched = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
      assert.equal(patched.status, 200, await patched.text());
      // The owner has a second key, on a laptop.
      const made = await owner.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: 'laptop' }) });
      assert.equal(made.status, 201, await made.clone().text());
      const laptopKey = ((await made.json()) as { api_key: string }).api_key;
      const laptop: TestAccount = { user: owner.user, key: laptopKey, api: (p, init) => apiFetch(server, p, laptopKey, init) };
      const laptops = await mint(id, laptop);
      const owners = await mint(id, owner);
      assert.deepEqual(await stillReading(id, laptops), ALL);

      // The laptop is lost: its key is deleted, and what it minted ends with it.
      assert.equal((await laptop.api('/auth/keys/current', { method: 'DELETE' })).status, 200);
      assert.deepEqual(await stillReading(id, laptops), [], "the deleted key's credentials, URLs and grants read nothing");
      assert.deepEqual(await stillReading(id, owners), ALL, "the other key's still read");

      // A browser's grant and credentials end when it signs out.
      const browser = await createBrowserSession(server, owner.user);
      const { grant } = (await (await browser.fetch(`/datasets/${id}/read-grant`, { method: 'POST' })).json()) as { grant: string };
      const credentials = (await (await browser.fetch(`/datasets/${id}/download-credentials`, { method: 'POST' })).json()) as Minted['credentials'];
      const browsers: Minted = { credentials, lfsUrl: owners.lfsUrl, grant };
      assert.deepEqual(await stillReading(id, browsers), ALL);
      assert.equal((await browser.fetch('/auth/logout', { method: 'POST' })).status, 200);
      assert.deepEqual(await stillReading(id, browsers), ['git-lfs download URL'], "only the other key's URL reads once the browser signed out");

      // A session that expires (30 days after it began) takes its grants and credentials along as well.
      const later = await createBrowserSession(server, owner.user);
      const grantOfLater = ((await (await later.fetch(`/datasets/${id}/read-grant`, { method: 'POST' })).json()) as { grant: string }).grant;
      const credentialsOfLater = (await (await later.fetch(`/datasets/${id}/download-credentials`, { method: 'POST' })).json()) as Minted['credentials'];
      const expiring: Minted = { credentials: credentialsOfLater, lfsUrl: owners.lfsUrl, grant: grantOfLater };
      assert.deepEqual(await stillReading(id, expiring), ALL);
      await server.deps.db.updateTable('sessions').set({ expires_at: new Date(server.clock.now().getTime() - 1000) }).where('user_id', '=', owner.user.id).execute();
      assert.deepEqual(await stillReading(id, expiring), ['git-lfs download URL'], 'nothing the expired session minted reads');
    });

    it('stop reading when their holder loses access, and once the dataset is deleted', async () => {
      const id = 'nd000712';
      await publicDataset(id);
      const adminsGrant = await mint(id, admin);
      const patched = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
      assert.equal(patched.status, 200, await patched.text());
      const owners = await mint(id, owner);
      assert.deepEqual(await stillReading(id, owners), ALL, "the owner's credentials of a private dataset read");
      assert.deepEqual(await stillReading(id, adminsGrant), ALL, "an admin's read");

      const revoked = await admin.api(`/admin/revoke/${owner.user.username}`, { method: 'POST' });
      assert.equal(revoked.status, 200, await revoked.text());
      assert.deepEqual(await stillReading(id, owners), [], 'a revoked owner reads nothing');

      const deleted = await admin.api(`/admin/datasets/${id}`, { method: 'DELETE' });
      assert.equal(deleted.status, 200, await deleted.text());
      // The objects are gone too; put them back to show the credentials themselves no longer read.
      await server.deps.objects.put(`${id}/objects/${sha(content)}`, content, { sha256: sha(content) });
      await putZarrCopy(server.deps.objects, id);
      assert.deepEqual(await stillReading(id, adminsGrant), [], 'nothing reads a deleted dataset');
    });
  });
}
