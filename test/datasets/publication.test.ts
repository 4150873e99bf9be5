import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startDataciteMock, type DataciteMock } from '../support/datacite-mock.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { addVersion } from '../support/versions.js';

async function json(res: Response): Promise<Record<string, any>> {
  return (await res.json()) as Record<string, any>;
}

const complete = { authors: ['Ada Lovelace'], license: 'CC0-1.0', description: 'Resting EEG of twenty adults.' };

describe('publication and DOIs with the built-in test provider', () => {
  let server: TestServer;
  let admin: TestAccount;
  let member: TestAccount;
  let id: string;
  const gone: string[] = [];

  before(async () => {
    server = await startTestServer();
    server.deps.hooks.datasetVisibilityChanged.push((d) => void gone.push(d));
    admin = await createAccount(server, { role: 'admin' });
    member = await createAccount(server);
    await server.deps.db.updateTable('users').set({ sandbox_completed_at: new Date() }).where('id', '=', member.user.id).execute();
    const res = await member.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Resting EEG' }) });
    assert.equal(res.status, 201);
    id = (await json(res)).id;
    assert.match(id, /^nd\d{6}$/);
  });
  after(async () => server?.close());

  it('refuses a request without a version, then one with incomplete metadata, listing what is missing', async () => {
    const noVersion = await member.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(noVersion.status, 409);
    assert.equal((await json(noVersion)).error, 'not_publishable');
    await addVersion(server, member, id, '1.0.0');
    const incomplete = await member.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(incomplete.status, 422);
    const body = await json(incomplete);
    assert.equal(body.error, 'metadata_incomplete');
    assert.deepEqual(body.missing, ['authors', 'license', 'description']);
    assert.equal(body.details.length, 3);
  });

  it('accepts a complete request once: a second pending one is 409 publication_pending', async () => {
    await member.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify(complete) });
    const first = await member.api(`/datasets/${id}/publish/request`, { method: 'POST', body: JSON.stringify({ message: 'please' }) });
    assert.equal(first.status, 201, await first.clone().text());
    const r = await json(first);
    assert.equal(r.status, 'pending');
    assert.equal(r.version, '1.0.0');
    assert.equal(r.requested_by, member.user.username);
    const second = await member.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(second.status, 409);
    assert.equal((await json(second)).error, 'publication_pending');
    const status = await json(await member.api(`/datasets/${id}/publish/status`));
    assert.equal(status.publication_status, 'pending');
    assert.equal(status.latest_request.id, r.id);
  });

  it('keeps the private dataset hidden from others, and the admin routes from members', async () => {
    const stranger = await createAccount(server);
    assert.equal((await stranger.api(`/datasets/${id}/publish/status`)).status, 404);
    assert.equal((await stranger.api(`/datasets/${id}/publish/request`, { method: 'POST' })).status, 404);
    const list = await member.api('/admin/publish/requests');
    assert.equal(list.status, 403);
  });

  it('denies with a reason, once; the dataset stays private and may ask again', async () => {
    const [pending] = (await json(await admin.api('/admin/publish/requests?status=pending'))).requests;
    assert.equal(pending.dataset_id, id);
    const missingReason = await admin.api(`/admin/publish/${pending.id}/deny`, { method: 'POST', body: '{}' });
    assert.equal(missingReason.status, 400);
    const denied = await admin.api(`/admin/publish/${pending.id}/deny`, { method: 'POST', body: JSON.stringify({ reason: 'Add a README.' }) });
    assert.equal(denied.status, 200);
    const d = await json(denied);
    assert.equal(d.status, 'denied');
    assert.equal(d.reason, 'Add a README.');
    assert.equal(d.decided_by, admin.user.username);
    const twice = await admin.api(`/admin/publish/${pending.id}/approve`, { method: 'POST' });
    assert.equal(twice.status, 409);
    assert.equal((await json(twice)).error, 'publication_not_pending');
    assert.equal((await apiFetch(server, `/datasets/${id}`)).status, 404);
    assert.equal((await json(await member.api(`/datasets/${id}/publish/status`))).publication_status, 'denied');
    assert.equal((await admin.api('/admin/publish/999999/approve', { method: 'POST' })).status, 404);
  });

  it('approves: mints test DOIs, makes the dataset public, drops cached visibility, audits', async () => {
    const again = await json(await member.api(`/datasets/${id}/publish/request`, { method: 'POST' }));
    const approved = await admin.api(`/admin/publish/${again.id}/approve`, { method: 'POST' });
    assert.equal(approved.status, 200, await approved.clone().text());
    const a = await json(approved);
    assert.equal(a.status, 'approved');
    assert.equal(a.doi, `10.5072/nds.${id}.v1.0.0`);
    const pub = await json(await apiFetch(server, `/datasets/${id}`));
    assert.equal(pub.visibility, 'public');
    assert.equal(pub.publication_status, 'published');
    assert.equal(pub.doi, `10.5072/nds.${id}.v1.0.0`);
    assert.equal(pub.concept_doi, `10.5072/nds.${id}`);
    assert.deepEqual(gone, [id]);
    const twice = await admin.api(`/admin/publish/${again.id}/approve`, { method: 'POST' });
    assert.equal(twice.status, 409);
    const audit = await json(await admin.api('/admin/audit'));
    const actions = audit.entries.filter((e: { target: string }) => e.target === id).map((e: { action: string }) => e.action);
    assert.ok(actions.includes('publication.approve') && actions.includes('publication.deny'), actions.join());
    assert.deepEqual((await json(await admin.api('/admin/publish/requests?status=approved'))).requests.map((r: { id: number }) => r.id), [again.id]);
  });

  it('publishing a later version mints its DOI and updates the concept DOI', async () => {
    await addVersion(server, member, id, '1.1.0');
    const r = await json(await member.api(`/datasets/${id}/publish/request`, { method: 'POST' }));
    const a = await json(await admin.api(`/admin/publish/${r.id}/approve`, { method: 'POST' }));
    assert.equal(a.doi, `10.5072/nds.${id}.v1.1.0`);
    const info = await json(await admin.api(`/admin/datasets/${id}/doi`));
    assert.equal(info.provider, 'test');
    assert.equal(info.test, true);
    assert.equal(info.doi, `10.5072/nds.${id}.v1.1.0`);
    assert.deepEqual(info.records.map((x: { doi: string }) => x.doi).sort(), [`10.5072/nds.${id}`, `10.5072/nds.${id}.v1.0.0`, `10.5072/nds.${id}.v1.1.0`]);
  });

  it('DOI admin routes: update needs a concept DOI; concept mints once, then refreshes', async () => {
    const res = await admin.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Mirror', visibility: 'public', ...complete }) });
    const mirror = (await json(res)).id;
    const early = await admin.api(`/admin/datasets/${mirror}/doi/update`, { method: 'POST' });
    assert.equal(early.status, 409);
    assert.equal((await json(early)).error, 'doi_not_minted');
    const c1 = await json(await admin.api(`/admin/datasets/${mirror}/doi/concept`, { method: 'POST' }));
    assert.equal(c1.created, true);
    assert.equal(c1.concept_doi, `10.5072/nds.${mirror}`);
    const c2 = await json(await admin.api(`/admin/datasets/${mirror}/doi/concept`, { method: 'POST' }));
    assert.equal(c2.created, false);
    const upd = await json(await admin.api(`/admin/datasets/${mirror}/doi/update`, { method: 'POST' }));
    assert.deepEqual(upd.updated, [`10.5072/nds.${mirror}`]);
    assert.equal((await member.api(`/admin/datasets/${mirror}/doi`)).status, 403);
  });
});

describe('publication with the DataCite provider', () => {
  let dc: DataciteMock;
  let server: TestServer;
  let admin: TestAccount;

  before(async () => {
    dc = await startDataciteMock({ repositoryId: 'NDS.TEST', password: 's3cret-password' });
    server = await startTestServer({ env: { DATACITE_URL: dc.url, DATACITE_REPOSITORY_ID: 'NDS.TEST', DATACITE_PASSWORD: 's3cret-password', DATACITE_PREFIX: '10.80000' } });
    admin = await createAccount(server, { role: 'admin' });
  });
  after(async () => {
    await server?.close();
    await dc?.close();
  });

  it('registers the concept and version DOIs with Basic auth and a JSON:API body, then updates with PUT', async () => {
    const id = (await json(await admin.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'EMG grip', ...complete, authors: ['Ada Lovelace', 'Hans Berger'] }) }))).id;
    await addVersion(server, admin, id, '2.0.0');
    const r = await json(await admin.api(`/datasets/${id}/publish/request`, { method: 'POST' }));
    const approved = await admin.api(`/admin/publish/${r.id}/approve`, { method: 'POST' });
    assert.equal(approved.status, 200, await approved.clone().text());
    assert.equal((await json(approved)).doi, `10.80000/nds.${id}.v2.0.0`);
    // Drafts first; findable only once the approval committed.
    assert.deepEqual(
      dc.calls.map((c) => `${c.method} ${decodeURIComponent(c.url)} ${c.body.data.attributes.doi} ${c.body.data.attributes.event ?? 'draft'}`),
      [`POST /dois 10.80000/nds.${id} draft`, `POST /dois 10.80000/nds.${id}.v2.0.0 draft`, `PUT /dois/10.80000/nds.${id} 10.80000/nds.${id} publish`, `PUT /dois/10.80000/nds.${id}.v2.0.0 10.80000/nds.${id}.v2.0.0 publish`],
    );
    assert.equal(dc.find(`10.80000/nds.${id}`)?.state, 'findable');
    assert.equal(dc.find(`10.80000/nds.${id}.v2.0.0`)?.state, 'findable');
    const version = dc.calls[3].body.data.attributes;
    assert.equal(dc.calls[1].body.data.type, 'dois');
    assert.deepEqual(version.titles, [{ title: 'EMG grip' }]);
    assert.deepEqual(version.creators.map((c: { name: string }) => c.name), ['Ada Lovelace', 'Hans Berger']);
    assert.equal(version.types.resourceTypeGeneral, 'Dataset');
    assert.equal(version.publicationYear, new Date().getUTCFullYear());
    assert.equal(version.event, 'publish');
    assert.equal(version.version, '2.0.0');
    assert.equal(version.url, `${server.url}/datasets/${id}?version=2.0.0`);
    assert.deepEqual(version.relatedIdentifiers, [{ relatedIdentifier: `10.80000/nds.${id}`, relatedIdentifierType: 'DOI', relationType: 'IsVersionOf' }]);
    const info = await json(await admin.api(`/admin/datasets/${id}/doi`));
    assert.equal(info.provider, 'datacite');
    assert.equal(info.test, false);

    await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ name: 'EMG grip strength' }) });
    const upd = await admin.api(`/admin/datasets/${id}/doi/update`, { method: 'POST' });
    assert.equal(upd.status, 200, await upd.clone().text());
    const puts = dc.calls.slice(4);
    assert.deepEqual(puts.map((c) => `${c.method} ${decodeURIComponent(c.url)}`).sort(), [`PUT /dois/10.80000/nds.${id}`, `PUT /dois/10.80000/nds.${id}.v2.0.0`]);
    assert.ok(puts.every((c) => c.body.data.attributes.titles[0].title === 'EMG grip strength'));
  });

  it('answers 502 when DataCite refuses, and leaves the request pending for a retry', async () => {
    const id = (await json(await admin.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Refused', ...complete }) }))).id;
    await addVersion(server, admin, id, '1.0.0');
    const r = await json(await admin.api(`/datasets/${id}/publish/request`, { method: 'POST' }));
    dc.server.close();
    dc.server.closeAllConnections();
    const failed = await admin.api(`/admin/publish/${r.id}/approve`, { method: 'POST' });
    assert.equal(failed.status, 502);
    assert.equal((await json(failed)).error, 'upstream_failed');
    const status = await json(await admin.api(`/datasets/${id}/publish/status`));
    assert.equal(status.latest_request.status, 'pending');
    assert.equal(status.visibility, 'private');
  });
});
