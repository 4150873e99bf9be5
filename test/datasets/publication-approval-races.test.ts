/**
 * An approval waits on DataCite (up to 20 s) between reading the dataset and making it public. An administrator's
 * takedown or deletion in that time wins: the approval is refused (never a 500) and makes nothing public or
 * findable (docs/search-and-publication.md, "Deciding"). The DataCite mock holds one call until the other
 * administrator's request has been answered: no sleeps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startDataciteMock, type DataciteMock } from '../support/datacite-mock.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { addVersion } from '../support/versions.js';

const complete = { authors: ['Ada Lovelace'], license: 'CC0-1.0', description: 'Resting EEG of twenty adults.' };

describe('a publication approval overlapping a takedown or a deletion', () => {
  let dc: DataciteMock;
  let server: TestServer;
  let approver: TestAccount;
  let other: TestAccount;

  before(async () => {
    dc = await startDataciteMock({ repositoryId: 'NDS.TEST', password: 'pw' });
    server = await startTestServer({ env: { DATACITE_URL: dc.url, DATACITE_REPOSITORY_ID: 'NDS.TEST', DATACITE_PASSWORD: 'pw', DATACITE_PREFIX: '10.80000' } });
    approver = await createAccount(server, { role: 'admin' });
    other = await createAccount(server, { role: 'admin' });
  });
  after(async () => {
    await server?.close();
    await dc?.close();
  });

  async function pendingRequest(versions: string[], publishFirst: boolean): Promise<{ id: string; requestId: number }> {
    const created = await approver.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Resting EEG', ...complete }) });
    assert.equal(created.status, 201);
    const id = (await created.json()).id as string;
    await addVersion(server, approver, id, versions[0]);
    if (publishFirst) {
      const first = await (await approver.api(`/datasets/${id}/publish/request`, { method: 'POST' })).json();
      assert.equal((await approver.api(`/admin/publish/${first.id}/approve`, { method: 'POST' })).status, 200);
      await addVersion(server, approver, id, versions[1]);
    }
    const r = await approver.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(r.status, 201, await r.clone().text());
    return { id, requestId: (await r.json()).id as number };
  }

  it("keeps an administrator's takedown that came while another approved a pending request", async () => {
    // Published at 1.0.0; the owner asks to publish 2.0.0; a problem is found and another admin takes it down.
    const { id, requestId } = await pendingRequest(['1.0.0', '2.0.0'], true);
    const gate = dc.hold();
    const approving = approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' });
    await gate.arrived;
    const takedown = await other.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
    assert.equal(takedown.status, 200);
    gate.release();
    const approved = await approving;
    assert.equal(approved.status, 409, await approved.clone().text());
    assert.equal((await approved.json()).error, 'publication_not_pending');

    const row = await server.deps.db.selectFrom('datasets').select(['visibility', 'doi']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.visibility, 'private');
    assert.equal(row.doi, `10.80000/nds.${id}.v1.0.0`, 'the version cited before stays the dataset DOI');
    assert.equal((await apiFetch(server, `/datasets/${id}`)).status, 404);
    // The takedown closed the request, saying why; the 2.0.0 DOI was left a draft, for the next approval of 2.0.0 to
    // reuse (DataCite never gives a deleted name out again).
    const status = await (await approver.api(`/datasets/${id}/publish/status`)).json();
    assert.equal(status.latest_request.id, requestId);
    assert.equal(status.latest_request.status, 'denied');
    assert.match(status.latest_request.reason, /made the dataset private/);
    assert.equal(dc.find(`10.80000/nds.${id}.v2.0.0`)?.state, 'draft');
    assert.deepEqual(dc.calls.filter((c) => c.method === 'DELETE'), []);
  });

  it('leaves no findable DOI, and no 500, when the dataset is deleted during the approval', async () => {
    const { id, requestId } = await pendingRequest(['1.0.0'], false);
    const gate = dc.hold();
    const approving = approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' });
    await gate.arrived;
    const deleted = await other.api(`/admin/datasets/${id}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, await deleted.clone().text());
    gate.release();
    const approved = await approving;
    assert.ok(approved.status === 404 || approved.status === 409, `${approved.status} ${await approved.clone().text()}`);
    const findable = [...dc.dois.values()].filter((d) => d.doi.includes(id) && d.state !== 'draft');
    assert.deepEqual(findable, [], 'a DOI of the deleted dataset resolves or is findable');
    assert.equal(dc.calls.filter((c) => c.body.data.attributes.doi.includes(id) && c.body.data.attributes.event === 'publish').length, 0);
  });
});
