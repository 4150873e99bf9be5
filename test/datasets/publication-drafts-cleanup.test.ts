/**
 * The draft DOIs of an approval that did not commit because its dataset was deleted are deleted at DataCite:
 * nothing of a deleted dataset is left there (decision 0057). Only the drafts that approval created go; a DOI
 * published before, or one nds did not make in that attempt, is never deleted, and a deletion DataCite refuses or
 * fails does not change the approval's answer. While the dataset exists its drafts stay, for its next approval
 * (test/datasets/publication-approval-races.test.ts): DataCite never gives a deleted name out again.
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

  /** Approves `requestId`, and deletes its dataset while DataCite registers the version DOI `version`. */
  async function approveWhileDeleted(id: string, requestId: number, version: string): Promise<Response> {
    const gate = dc.hold((c) => c.method === 'POST' && c.body.data.attributes.doi === `${PREFIX}/nds.${id}.v${version}`);
    const approving = approver.api(`/admin/publish/${requestId}/approve`, { method: 'POST' });
    await gate.arrived;
    const deleted = await other.api(`/admin/datasets/${id}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, await deleted.clone().text());
    gate.release();
    return approving;
  }

  const deletions = (id: string) => dc.calls.filter((c: DataciteCall) => c.method === 'DELETE' && c.body.data.id.includes(id)).map((c) => c.body.data.id);

  it('deletes both drafts the approval made, and still answers 404', async () => {
    const { id, requestId } = await pendingRequest(['1.0.0']);
    const approved = await approveWhileDeleted(id, requestId, '1.0.0');
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
    const approved = await approveWhileDeleted(id, requestId, '2.0.0');
    assert.equal(approved.status, 404, await approved.clone().text());
    assert.equal(dc.find(`${PREFIX}/nds.${id}`)?.state, 'findable');
    assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`)?.state, 'findable');
    assert.equal(dc.find(`${PREFIX}/nds.${id}.v2.0.0`), undefined);
    assert.deepEqual(deletions(id), [`${PREFIX}/nds.${id}.v2.0.0`], 'a DELETE was sent for a DOI this approval did not make');
  });

  it('answers the refusal, and logs the draft it could not delete, when DataCite fails the deletion', async () => {
    const { id, requestId } = await pendingRequest(['1.0.0']);
    dc.failNext('DELETE');
    const approved = await approveWhileDeleted(id, requestId, '1.0.0');
    assert.equal(approved.status, 404, await approved.clone().text());
    assert.equal((await approved.json()).error, 'dataset_not_found');
    const concept = `${PREFIX}/nds.${id}`;
    const logged = await log.waitFor((e) => e.doi === concept && /could not be deleted/.test(String(e.msg)), 'warning about the draft left', 5000);
    assert.equal(logged.dataset, id);
    // The first DELETE failed (the concept draft stays a draft, resolving nowhere); the next one went on.
    assert.equal(dc.find(concept)?.state, 'draft');
    assert.equal(dc.find(`${PREFIX}/nds.${id}.v1.0.0`), undefined);
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
