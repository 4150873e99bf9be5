/**
 * A version DOI is `<prefix>/nds.<id>.v<version>`, cited "to mean exactly those files", and DOI names ignore case
 * (DOI Handbook 2.4): so version numbers that differ only in case are one number, and an approval never takes
 * over a DOI that DataCite holds but nds did not register for that version (docs/search-and-publication.md, "DOIs").
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startDataciteMock, type DataciteMock } from '../support/datacite-mock.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { addVersion } from '../support/versions.js';

const complete = { authors: ['Ada Lovelace'], license: 'CC0-1.0', description: 'Two release candidates.' };

describe('DOI names of versions', () => {
  let dc: DataciteMock;
  let server: TestServer;
  let admin: TestAccount;
  before(async () => {
    dc = await startDataciteMock({ repositoryId: 'NDS.TEST', password: 'pw' });
    server = await startTestServer({ env: { DATACITE_URL: dc.url, DATACITE_REPOSITORY_ID: 'NDS.TEST', DATACITE_PASSWORD: 'pw', DATACITE_PREFIX: '10.80000' } });
    admin = await createAccount(server, { role: 'admin' });
  });
  after(async () => {
    await server?.close();
    await dc?.close();
  });

  async function newDataset(): Promise<string> {
    const created = await admin.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Case', ...complete }) });
    assert.equal(created.status, 201);
    return (await created.json()).id as string;
  }

  async function publish(id: string): Promise<Response> {
    const r = await admin.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(r.status, 201, await r.clone().text());
    return admin.api(`/admin/publish/${(await r.json()).id}/approve`, { method: 'POST' });
  }

  it('refuses a version number that differs from an existing one only in case, so its DOI keeps its files', async () => {
    const id = await newDataset();
    await addVersion(server, admin, id, '1.0.0-RC.1');
    const first = await publish(id);
    assert.equal(first.status, 200);
    const firstDoi = (await first.json()).doi as string;
    const cited = structuredClone(dc.find(firstDoi)!);

    const body = 'the second candidate\n';
    const sha256 = createHash('sha256').update(body).digest('hex');
    await server.deps.objects.put(`${id}/objects/${sha256}`, body);
    const made = await admin.api(`/datasets/${id}/versions`, { method: 'POST', body: JSON.stringify({ version: '1.0.0-rc.1', manifest: [{ path: 'README', size: Buffer.byteLength(body), sha256 }] }) });
    assert.equal(made.status, 409);
    const refusal = await made.json();
    assert.equal(refusal.error, 'version_exists');
    assert.match(refusal.message, /1\.0\.0-RC\.1/);
    assert.deepEqual(dc.find(firstDoi), cited);
  });

  it('does not take over a DOI that DataCite holds but nds did not register for this version', async () => {
    const id = await newDataset();
    await addVersion(server, admin, id, '1.0.0');
    // Another service sharing the prefix (a staging copy of nds, say) registered this name first.
    const name = `10.80000/nds.${id}.v1.0.0`;
    dc.dois.set(name.toUpperCase(), { doi: name, state: 'findable', attributes: { url: 'https://elsewhere.example/ds', version: '1.0.0' } });
    const before = structuredClone(dc.find(name));
    const approved = await publish(id);
    assert.equal(approved.status, 409, await approved.clone().text());
    assert.equal((await approved.json()).error, 'conflict');
    assert.deepEqual(dc.find(name), before);
    const row = await server.deps.db.selectFrom('datasets').select(['visibility', 'doi']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { visibility: 'private', doi: null });
    assert.deepEqual(await server.deps.db.selectFrom('doi_records').select('doi').where('doi', '=', name).execute(), []);
  });

  it('updates its own DOI when an approval is retried after DataCite registered it', async () => {
    const id = await newDataset();
    await addVersion(server, admin, id, '1.0.0');
    const r = await (await admin.api(`/datasets/${id}/publish/request`, { method: 'POST' })).json();
    // A first attempt recorded the version DOI and DataCite registered it, but the answer was lost (a timeout):
    // the retry finds the name taken, by nds itself for this very version, and updates it.
    const versionName = `10.80000/nds.${id}.v1.0.0`;
    await server.deps.db.insertInto('doi_records').values({ doi: versionName, dataset_id: id, kind: 'version', version: '1.0.0', provider: 'datacite', test: false, url: 'x', metadata: '{}' }).execute();
    dc.dois.set(versionName.toUpperCase(), { doi: versionName, state: 'draft', attributes: { url: 'x' } });
    const approved = await admin.api(`/admin/publish/${r.id}/approve`, { method: 'POST' });
    assert.equal(approved.status, 200, await approved.clone().text());
    assert.equal(dc.find(versionName)?.state, 'findable');
    assert.equal(dc.find(versionName)?.attributes.url, `${server.url}/datasets/${id}?version=1.0.0`);
  });
});
