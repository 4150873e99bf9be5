/**
 * Members of a dataset (decision 0028) over real HTTP, on a private, converted dataset: a member reads it by
 * every path its owner reads it by; each role's rights on every route family; a stranger, and a member once
 * removed (with the credentials and grants minted for them), get exactly what an unknown id gets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { readOutbox } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { uploadedDataset } from '../annotations/support.js';
import { createUploader, json } from './support.js';

const send = (method: string, body?: unknown): RequestInit => ({ method, ...(body !== undefined && { body: JSON.stringify(body) }) });

describe('dataset members', () => {
  let server: TestServer;
  let owner: TestAccount;
  let admin: TestAccount;
  let reader: TestAccount;
  let annotator: TestAccount;
  let maintainer: TestAccount;
  let stranger: TestAccount;
  let id: string;
  let recording: string;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    admin = await createAccount(server, { role: 'admin' });
    reader = await createAccount(server);
    annotator = await createAccount(server);
    // Not approved for uploads: membership is their upload access for this dataset.
    maintainer = await createAccount(server, { status: 'verified' });
    stranger = await createAccount(server);
    ({ id, recording } = await uploadedDataset(server, owner));
    for (const [who, role] of [[reader, 'reader'], [annotator, 'annotator'], [maintainer, 'maintainer']] as const) {
      const added = await json(await owner.api(`/datasets/${id}/members/${who.user.username}`, send('PUT', { role })), 201);
      assert.deepEqual([added.username, added.role, added.added_by], [who.user.username, role, owner.user.username]);
    }
  });
  after(() => server.close());

  /** Every path that reads a dataset, each answering a status and the body's text with the id blanked. */
  async function readPaths(account: TestAccount | undefined, datasetId: string): Promise<Record<string, string>> {
    const api = (p: string, init?: RequestInit) => (account ? account.api(p, init) : fetch(`${server.url}${p}`, init));
    const q = `path=${encodeURIComponent(recording)}`;
    const answers: Record<string, Response> = {
      dataset: await api(`/datasets/${datasetId}`),
      recordings: await api(`/datasets/${datasetId}/recordings`),
      signal: await api(`/datasets/${datasetId}/signal?${q}&duration=0.1&format=json`),
      events: await api(`/datasets/${datasetId}/events?${q}`),
      annotations: await api(`/datasets/${datasetId}/annotations?${q}`),
      export: await api(`/datasets/${datasetId}/annotations/export?${q}`),
      history: await api(`/datasets/${datasetId}/annotations/history?${q}`),
      labels: await api(`/datasets/${datasetId}/annotations/labels`),
      members: await api(`/datasets/${datasetId}/members`),
      versions: await api(`/datasets/${datasetId}/versions`),
      credentials: await api(`/datasets/${datasetId}/download-credentials`, { method: 'POST' }),
      grant: await api(`/datasets/${datasetId}/read-grant`, { method: 'POST' }),
      git: await api(`/git/${datasetId}.git/info/refs?service=git-upload-pack`, account ? { headers: { authorization: `Basic ${Buffer.from(`x:${account.key}`).toString('base64')}` } } : {}),
    };
    const out: Record<string, string> = {};
    for (const [name, res] of Object.entries(answers)) out[name] = `${res.status} ${(await res.text()).replaceAll(datasetId, '<id>')}`;
    return out;
  }

  async function listed(account: TestAccount): Promise<{ datasets: boolean; catalogue: boolean; windows: boolean; page: boolean; mcp: boolean }> {
    const datasets = await json(await account.api('/datasets?limit=100'), 200);
    const catalogue = await json(await account.api(`/recordings?dataset=${id}`), 200);
    const windows = await json(await account.api('/windows', send('POST', { recordings: { dataset: id }, fixed: { length_s: 0.25 } })), 200);
    const home = await (await account.api('/datasets', { headers: { accept: 'text/html' } })).text();
    const rpc = await account.api('/mcp', { method: 'POST', headers: { accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_dataset', arguments: { dataset_id: id } } }) });
    const mcp = (await rpc.json()) as { result?: { isError?: boolean } };
    return {
      datasets: datasets.datasets.some((d: { id: string }) => d.id === id),
      catalogue: catalogue.recordings.length > 0,
      windows: windows.windows.length > 0,
      page: home.includes(id),
      mcp: mcp.result?.isError === false || (mcp.result !== undefined && !mcp.result.isError),
    };
  }

  it('lets each member read the private dataset wherever its owner reads it', async () => {
    const owners = await readPaths(owner, id);
    for (const member of [reader, annotator, maintainer]) {
      const theirs = await readPaths(member, id);
      for (const [name, answer] of Object.entries(theirs)) {
        // The git repository: none is hosted (a dataset of uploaded versions), which a reader may learn as its owner does.
        assert.equal(answer.slice(0, 3), owners[name]!.slice(0, 3), `${name} for a ${member === reader ? 'reader' : member === annotator ? 'annotator' : 'maintainer'}: ${answer.slice(0, 200)}`);
      }
      assert.deepEqual(await listed(member), { datasets: true, catalogue: true, windows: true, page: true, mcp: true });
      const page = await member.api(`/datasets/${id}`, { headers: { accept: 'text/html' } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /ndsg\./, 'the page carries a read grant for the viewer');
    }
    assert.match(owners.signal!, /^200 /);
  });

  it('answers a stranger and an anonymous caller on every path exactly as an unknown id', async () => {
    const unknown = await readPaths(stranger, 'nd999999');
    assert.deepEqual(await readPaths(stranger, id), unknown);
    assert.deepEqual(await readPaths(undefined, id), await readPaths(undefined, 'nd999999'));
    assert.deepEqual(await listed(stranger), { datasets: false, catalogue: false, windows: false, page: false, mcp: false });
  });

  it("gives each role its rights on every route family, and 403 for the rest of a dataset it sees", async () => {
    const file = { path: 'extra.txt', size: 3, sha256: 'a'.repeat(64) };
    const q = `path=${encodeURIComponent(recording)}`;
    const actions: Array<[string, (a: TestAccount) => Promise<Response>, Array<'reader' | 'annotator' | 'maintainer' | 'owner' | 'admin'>]> = [
      ['PATCH metadata', (a) => a.api(`/datasets/${id}`, send('PATCH', { description: `by ${a.user.username}` })), ['maintainer', 'owner', 'admin']],
      ['upload URLs', (a) => a.api(`/datasets/${id}/upload-urls`, send('POST', { files: [file] })), ['maintainer', 'owner', 'admin']],
      // Refused for incomplete metadata (422) or as already pending (409) once asked: past the rights check either way.
      ['request publication', (a) => a.api(`/datasets/${id}/publish/request`, send('POST', {})), ['maintainer', 'owner', 'admin']],
      ['add a member', (a) => a.api(`/datasets/${id}/members/${stranger.user.username}`, send('PUT', { role: 'reader' })), ['maintainer', 'owner', 'admin']],
      ['annotate', (a) => a.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.1, duration: 0, label: a.user.username })), ['annotator', 'maintainer', 'owner', 'admin']],
      ['read annotations', (a) => a.api(`/datasets/${id}/annotations?${q}`), ['reader', 'annotator', 'maintainer', 'owner', 'admin']],
      ['delete the dataset', (a) => a.api(`/admin/datasets/${id}x`, send('DELETE')), []],
    ];
    const accounts = { reader, annotator, maintainer, owner, admin };
    for (const [name, act, allowed] of actions) {
      for (const [role, account] of Object.entries(accounts)) {
        const res = await act(account);
        const body = await res.text();
        if (name === 'delete the dataset') {
          // An admin route: any other account is refused before any dataset is looked at.
          if (role !== 'admin') assert.equal(res.status, 403, `${name} by ${role}: ${body}`);
          continue;
        }
        if (allowed.includes(role as never)) assert.ok(res.status !== 403 && res.status !== 404 && res.status < 500, `${name} by ${role}: ${res.status} ${body}`);
        else assert.equal(res.status, 403, `${name} by ${role}: ${res.status} ${body}`);
        if (name === 'add a member' && res.status < 300) assert.equal((await owner.api(`/datasets/${id}/members/${stranger.user.username}`, send('DELETE'))).status, 204);
      }
      // A stranger gets the unknown id's answer on each, never a 403 that would tell the dataset exists.
      if (name !== 'delete the dataset') assert.equal((await act(stranger)).status, 404, `${name} by a stranger`);
    }
    // A maintainer never changes the visibility (the owner's and admins'), and an owner is no member.
    assert.equal((await maintainer.api(`/datasets/${id}/members/${owner.user.username}`, send('PUT', { role: 'reader' }))).status, 409);
  });

  it('mails the person added', async () => {
    const mails = (await readOutbox(server)).filter((m) => m.to === annotator.user.email);
    assert.equal(mails.length, 1);
    assert.match(mails[0]!.subject, new RegExp(`${owner.user.username} shared ${id} with you`));
    assert.match(mails[0]!.text, /as an annotator/);
    // A change of role is a 200, and mails nobody again.
    const changed = await json(await maintainer.api(`/datasets/${id}/members/${annotator.user.username}`, send('PUT', { role: 'annotator' })), 200);
    assert.deepEqual([changed.role, changed.added_by], ['annotator', maintainer.user.username]);
    assert.equal((await readOutbox(server)).filter((m) => m.to === annotator.user.email).length, 1);
  });

  it('ends a removed member\'s access at once: every path, and the credentials and grants minted for them', async () => {
    const leaver = await createAccount(server);
    await json(await owner.api(`/datasets/${id}/members/${leaver.user.username}`, send('PUT', { role: 'reader' })), 201);
    const { token } = await json(await leaver.api(`/datasets/${id}/download-credentials`, { method: 'POST' }), 200);
    const { grant } = await json(await leaver.api(`/datasets/${id}/read-grant`, { method: 'POST' }), 200);
    const manifest = `/objects/${id}/versions/1.0.0/manifest.json`;
    assert.equal((await fetch(`${server.url}${manifest}`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    const zarr = `/zarrproxy/${id}/zarr/index.json`;
    assert.equal((await fetch(`${server.url}${zarr}`, { headers: { authorization: `Bearer ${grant}`, origin: server.url } })).status, 200);
    const signalByGrant = `/datasets/${id}/signal?path=${encodeURIComponent(recording)}&duration=0.1&format=json&grant=${encodeURIComponent(grant)}`;
    assert.equal((await fetch(`${server.url}${signalByGrant}`)).status, 200);

    // Removed by a maintainer; a second member leaves by themselves.
    assert.equal((await maintainer.api(`/datasets/${id}/members/${leaver.user.username}`, send('DELETE'))).status, 204);
    const quitter = await createAccount(server);
    await json(await owner.api(`/datasets/${id}/members/${quitter.user.username}`, send('PUT', { role: 'annotator' })), 201);
    assert.equal((await quitter.api(`/datasets/${id}/members/${quitter.user.username}`, send('DELETE'))).status, 204);

    const unknown = await readPaths(leaver, 'nd999999');
    assert.deepEqual(await readPaths(leaver, id), unknown);
    assert.deepEqual(await readPaths(quitter, id), await readPaths(quitter, 'nd999999'));
    assert.equal((await fetch(`${server.url}${manifest}`, { headers: { authorization: `Bearer ${token}` } })).status, 403);
    assert.equal((await fetch(`${server.url}${zarr}`, { headers: { authorization: `Bearer ${grant}`, origin: server.url } })).status, 404);
    assert.equal((await fetch(`${server.url}${signalByGrant}`)).status, 404);
    const { members } = await json(await owner.api(`/datasets/${id}/members`), 200);
    assert.deepEqual(members.map((m: { username: string }) => m.username).sort(), [reader, annotator, maintainer].map((a) => a.user.username).sort());
  });
});
