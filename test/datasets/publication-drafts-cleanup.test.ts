/**
 * The draft DOIs of an approval that did not commit because its dataset was deleted are deleted at DataCite:
 * nothing of a deleted dataset is left there (decision 0057). Only the drafts that approval created go; a DOI
 * published before, or one nds did not make in that attempt, is never deleted, and a deletion DataCite refuses or
 * fails does not change the approval's answer. While the dataset exists its drafts stay, for its next approval
 * (test/datasets/publication-approval-races.test.ts): DataCite never gives a deleted name out again. Deleting the
 * dataset later deletes them (docs/search-and-publication.md, "DOIs"), and never a DOI it published.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isNdsError } from '../../src/core/errors.js';
import { DataciteProvider } from '../../src/datasets/doi/datacite-provider.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startDataciteMock, type DataciteCall, type DataciteMock } from '../support/datacite-mock.js';
import { serverLog, type ServerLog } from '../support/server-log.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { addVersion } from '../support/versions.js';

const complete = { authors: ['Ada Lovelace'], license: 'CC0-1.0', description: 'Resting EEG of twenty adults.' };
const credentials = { repositoryId: 'NDS.TEST', password: 'pw' };
const PREFIX = '10.80000';

describe('the draft DOIs of an approval refused because its dataset was deleted', () => {
  let dc: DataciteMock;
  let log: ServerLog;
  let server: TestServer;
  let approver: TestAccount;
  let other: TestAccount;

  before(async () => {
    dc = await startDataciteMock(credentials);
    log = serverLog();
    server = await startTestServer({
      env: { DATACITE_URL: dc.url, DATACITE_REPOSITORY_ID: credentials.repositoryId, DATACITE_PASSWORD: credentials.password, DATACITE_PREFIX: PREFIX, LOG_LEVEL: 'warn' },
      logDestination: log.destination,
    });
    approver = await createAccount(server, { role: 'admin' });
    other = await createAccount(server, { role: 'admin' });
  });
  after(async () => {
    await server?.close();
    await dc?.close();
  });

  async function pendingRequest(versions: string[]): Promise<{ id: string; requestId: number }> {
    const created = await approver.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Resting EEG', ...complete }) });
    assert.equal(created.status, 201);
    const id = (await created.json()).id as string;
    for (const [i, version] of versions.entries()) {
      await addVersion(server, approver, id, version);
      const r = await approver.api(`/datasets/${id}/publish/request`, { method: 'POST' });
      assert.equal(r.status, 201, await r.clone().text());
      const requestId = (await r.json()).id as number;
      if (i === versions.length - 1) return { id, requestId };
      assert.equal((await approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' })).status, 200);
    }
    throw new Error('no version');
  }

  /**
   * Approves `requestId`, and deletes its dataset while DataCite registers the DOI `held` (its POST waits);
   * `beforeRelease` runs once the deletion answered.
   */
  async function approveWhileDeleted(id: string, requestId: number, held: string, beforeRelease?: () => void): Promise<Response> {
    const gate = dc.hold((c) => c.method === 'POST' && c.body.data.attributes.doi === held);
    const approving = approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' });
    await gate.arrived;
    const deleted = await other.api(`/admin/datasets/${id}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, await deleted.clone().text());
    beforeRelease?.();
    gate.release();
    return approving;
  }

  // The names a DELETE was sent for, each once: the deletion of the dataset sends one for each draft it finds
  // recorded (decision 0060), and the approval one for each draft it made; the later of the two finds it gone.
  const deletions = (id: string) => [...new Set(dc.calls.filter((c: DataciteCall) => c.method === 'DELETE' && c.body.data.id.includes(id)).map((c) => c.body.data.id))];

  it('deletes both drafts the approval made, and still answers 404', async () => {
    const { id, requestId } = await pendingRequest(['1.0.0']);
    const approved = await approveWhileDeleted(id, requestId, `${PREFIX}/nds.${id}.v1.0.0`);
    assert.equal(approved.status, 404, await approved.clone().text());
    assert.equal((await approved.json()).error, 'dataset_not_found');
    assert.equal(dc.find(`${PREFIX}/nds.${id}`), undefined, 'the concept draft of a deleted dataset stays at DataCite');
    assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`), undefined, 'the version draft of a deleted dataset stays at DataCite');
    assert.deepEqual(deletions(id), [`${PREFIX}/nds.${id}`, `${PREFIX}/nds.${id}.v1.0.0`]);
  });

  it('deletes only the draft that approval made: the DOIs published before stay findable', async () => {
    // Published at 1.0.0 (concept and version DOI findable); the approval of 2.0.0 updates the concept DOI and
    // makes the 2.0.0 draft, then finds the dataset deleted.
    const { id, requestId } = await pendingRequest(['1.0.0', '2.0.0']);
    const approved = await approveWhileDeleted(id, requestId, `${PREFIX}/nds.${id}.v2.0.0`);
    assert.equal(approved.status, 404, await approved.clone().text());
    assert.equal(dc.find(`${PREFIX}/nds.${id}`)?.state, 'findable');
    assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`)?.state, 'findable');
    assert.equal(dc.find(`${PREFIX}/nds.${id}.v2.0.0`), undefined);
    assert.deepEqual(deletions(id), [`${PREFIX}/nds.${id}.v2.0.0`], 'a DELETE was sent for a DOI this approval did not make');
  });

  it('answers the refusal, and logs the draft it could not delete, when DataCite fails the deletion', async () => {
    // The concept DOI's POST waits while the dataset is deleted (its DELETE finds no such name yet); released, the
    // approval creates the concept draft, finds the dataset gone and deletes it: that DELETE fails.
    const { id, requestId } = await pendingRequest(['1.0.0']);
    const concept = `${PREFIX}/nds.${id}`;
    const approved = await approveWhileDeleted(id, requestId, concept, () => dc.failNext('DELETE'));
    assert.equal(approved.status, 404, await approved.clone().text());
    assert.equal((await approved.json()).error, 'dataset_not_found');
    const logged = await log.waitFor((e) => e.doi === concept && /could not be deleted/.test(String(e.msg)), 'warning about the draft left', 5000);
    assert.equal(logged.dataset, id);
    // The concept draft stays a draft, resolving nowhere; no version DOI was registered.
    assert.equal(dc.find(concept)?.state, 'draft');
    assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`), undefined);
  });

  describe('deleting the dataset later', () => {
    /** A request for `version` of `id`, approved while another administrator does `meanwhile`: the approval is refused. */
    async function refusedApproval(id: string, version: string, meanwhile: (requestId: number) => Promise<Response>): Promise<void> {
      const r = await approver.api(`/datasets/${id}/publish/request`, { method: 'POST' });
      assert.equal(r.status, 201, await r.clone().text());
      const requestId = (await r.json()).id as number;
      const gate = dc.hold((c) => c.method === 'POST' && c.body.data.attributes.doi === `${PREFIX}/nds.${id}.v${version}`);
      const approving = approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' });
      await gate.arrived;
      const done = await meanwhile(requestId);
      assert.equal(done.status, 200, await done.clone().text());
      gate.release();
      const approved = await approving;
      assert.equal(approved.status, 409, await approved.clone().text());
    }

    const takedown = (id: string) => () => other.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
    const denial = (requestId: number) => other.api(`/admin/publish/${requestId}/deny`, { method: 'POST', body: JSON.stringify({ reason: 'Add a README.' }) });
    const deleteDataset = (id: string) => other.api(`/admin/datasets/${id}`, { method: 'DELETE' });

    it('deletes the draft a takedown left, and sends no DELETE for the DOIs published before', async () => {
      // Published at 1.0.0; the approval of 2.0.0 made its draft, then a takedown won: the draft stays while the
      // dataset exists, for its next approval.
      const { id, requestId } = await pendingRequest(['1.0.0']);
      assert.equal((await approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' })).status, 200);
      await addVersion(server, approver, id, '2.0.0');
      await refusedApproval(id, '2.0.0', takedown(id));
      assert.equal(dc.find(`${PREFIX}/nds.${id}.v2.0.0`)?.state, 'draft');
      assert.deepEqual(deletions(id), []);

      const deleted = await deleteDataset(id);
      assert.equal(deleted.status, 200, await deleted.clone().text());
      assert.equal(dc.find(`${PREFIX}/nds.${id}.v2.0.0`), undefined, 'the draft a refused approval left stays at DataCite');
      assert.equal(dc.find(`${PREFIX}/nds.${id}`)?.state, 'findable');
      assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`)?.state, 'findable');
      assert.deepEqual(deletions(id), [`${PREFIX}/nds.${id}.v2.0.0`], 'a DELETE was sent for a findable DOI');
    });

    it('deletes both drafts of a dataset never published, whose approval another decision refused', async () => {
      const id = (await (await approver.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Resting EEG', ...complete }) })).json()).id as string;
      await addVersion(server, approver, id, '1.0.0');
      await refusedApproval(id, '1.0.0', denial);
      assert.equal(dc.find(`${PREFIX}/nds.${id}`)?.state, 'draft');
      assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`)?.state, 'draft');

      const deleted = await deleteDataset(id);
      assert.equal(deleted.status, 200, await deleted.clone().text());
      assert.equal(dc.find(`${PREFIX}/nds.${id}`), undefined);
      assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`), undefined);
      assert.deepEqual(deletions(id), [`${PREFIX}/nds.${id}`, `${PREFIX}/nds.${id}.v1.0.0`]);
    });

    it("sends no DELETE for a published dataset's DOIs, all findable", async () => {
      const { id, requestId } = await pendingRequest(['1.0.0', '2.0.0']);
      assert.equal((await approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' })).status, 200);
      const deleted = await deleteDataset(id);
      assert.equal(deleted.status, 200, await deleted.clone().text());
      assert.deepEqual(deletions(id), []);
      for (const doi of [`${PREFIX}/nds.${id}`, `${PREFIX}/nds.${id}.v1.0.0`, `${PREFIX}/nds.${id}.v2.0.0`]) assert.equal(dc.find(doi)?.state, 'findable', doi);
    });

    it('deletes the dataset and logs the draft DataCite failed to delete, which stays a draft', async () => {
      const id = (await (await approver.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Resting EEG', ...complete }) })).json()).id as string;
      await addVersion(server, approver, id, '1.0.0');
      await refusedApproval(id, '1.0.0', denial);
      dc.failNext('DELETE');
      const deleted = await deleteDataset(id);
      assert.equal(deleted.status, 200, await deleted.clone().text());
      assert.equal((await deleted.json()).deleted, true);
      assert.equal((await approver.api(`/datasets/${id}`)).status, 404);
      const concept = `${PREFIX}/nds.${id}`;
      const logged = await log.waitFor((e) => e.doi === concept && /could not be deleted/.test(String(e.msg)), 'warning about the draft left', 5000);
      assert.equal(logged.dataset, id);
      assert.equal(dc.find(concept)?.state, 'draft');
      assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`), undefined, 'the next draft was deleted all the same');
    });
  });
});

describe('DataciteProvider.deleteDraft', () => {
  let dc: DataciteMock;
  let provider: DataciteProvider;
  before(async () => {
    dc = await startDataciteMock(credentials);
    provider = new DataciteProvider({ url: dc.url, ...credentials, prefix: PREFIX });
  });
  after(() => dc?.close());

  it('deletes a draft and lets a name DataCite does not hold be', async () => {
    dc.dois.set(`${PREFIX}/NDS.ND000001`, { doi: `${PREFIX}/nds.nd000001`, state: 'draft', attributes: {} });
    await provider.deleteDraft(`${PREFIX}/nds.nd000001`);
    assert.equal(dc.find(`${PREFIX}/nds.nd000001`), undefined);
    await provider.deleteDraft(`${PREFIX}/nds.nd000001`);
    assert.deepEqual(
      dc.calls.map((c) => `${c.method} ${decodeURIComponent(c.url)} ${c.contentType ?? 'no body'}`),
      [`DELETE /dois/${PREFIX}/nds.nd000001 no body`, `DELETE /dois/${PREFIX}/nds.nd000001 no body`],
    );
  });

  it('refuses a registered or findable DOI with conflict, and it stays', async () => {
    for (const state of ['registered', 'findable'] as const) {
      const doi = `${PREFIX}/nds.nd00000${state === 'registered' ? 2 : 3}`;
      dc.dois.set(doi.toUpperCase(), { doi, state, attributes: {} });
      await assert.rejects(provider.deleteDraft(doi), (err) => isNdsError(err, 'conflict') && err.message.includes(doi));
      assert.equal(dc.find(doi)?.state, state);
    }
  });
});
