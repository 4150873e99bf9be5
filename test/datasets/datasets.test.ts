/** Dataset records over real HTTP: who creates what, visibility, paging, resolve, PATCH and the admin delete. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from './support.js';

const post = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body) });
const patch = (body: unknown) => ({ method: 'PATCH', body: JSON.stringify(body) });

describe('datasets', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let admin: TestAccount;
  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    stranger = await createUploader(server);
    admin = await createAccount(server, { role: 'admin' });
  });
  after(() => server.close());

  it('gives an approved, trained account a private nd dataset with every contract field', async () => {
    const d = await json(await owner.api('/datasets', post({ name: 'Resting EEG', description: 'eyes closed', keywords: ['rest'], authors: ['A. Author'], license: 'CC0-1.0' })), 201);
    assert.match(d.id, /^nd\d{6}$/);
    assert.equal(d.visibility, 'private');
    assert.equal(d.sandbox, false);
    assert.equal(d.owner, owner.user.username);
    for (const f of ['zarr_status', 'zarr_converted_at', 'zarr_store_count', 'zarr_index_etag', 'zarr_source_commit', 'latest_version', 'doi', 'concept_doi', 'publication_status', 'n_subjects', 'source_repo']) assert.equal(d[f], null, f);
    assert.deepEqual([d.keywords, d.authors, d.license, d.size_bytes], [['rest'], ['A. Author'], 'CC0-1.0', 0]);
  });

  it('gives an untrained account a sandbox dataset, and refuses it a real one', async () => {
    const fresh = await createAccount(server);
    const d = await json(await fresh.api('/datasets', post({ name: 'practice' })), 201);
    assert.match(d.id, /^sb\d{6}$/);
    assert.equal(d.sandbox, true);
    const refused = await json(await fresh.api('/datasets', post({ name: 'real', sandbox: false })), 403);
    assert.equal(refused.error, 'sandbox_required');
    const verified = await createAccount(server, { status: 'verified' });
    await server.deps.db.updateTable('users').set({ sandbox_completed_at: new Date() }).where('id', '=', verified.user.id).execute();
    assert.equal((await json(await verified.api('/datasets', post({ name: 'real' })), 403)).error, 'upload_access_required');
    assert.match((await json(await verified.api('/datasets', post({ name: 'practice', sandbox: true })), 201)).id, /^sb/);
    const pending = await createAccount(server, { status: 'pending' });
    assert.equal((await json(await pending.api('/datasets', post({ name: 'x' })), 403)).error, 'account_pending');
    assert.equal((await server.deps.db.selectFrom('datasets').select('id').where('name', '=', 'real').execute()).length, 0);
  });

  it('lets only an admin create a public dataset', async () => {
    assert.equal((await json(await owner.api('/datasets', post({ name: 'mirror', visibility: 'public' })), 403)).error, 'admin_required');
    const d = await json(await admin.api('/datasets', post({ name: 'mirror', visibility: 'public', external_ids: ['openneuro:ds004504'] })), 201);
    assert.equal(d.visibility, 'public');
    assert.match(d.id, /^nd/);
  });

  it('hides a private dataset from strangers, anonymous callers and removed members with 404, and shows it to its owner, members and admins', async () => {
    const d = await json(await owner.api('/datasets', post({ name: 'secret' })), 201);
    for (const res of [await stranger.api(`/datasets/${d.id}`), await fetch(`${server.url}/datasets/${d.id}`)]) {
      assert.equal((await json(res, 404)).error, 'dataset_not_found');
    }
    assert.equal((await json(await owner.api(`/datasets/${d.id}`), 200)).name, 'secret');
    assert.equal((await json(await admin.api(`/datasets/${d.id}`), 200)).name, 'secret');
    const mine = await json(await owner.api('/datasets?limit=100'), 200);
    assert.ok(mine.datasets.some((x: { id: string }) => x.id === d.id));
    const theirs = await json(await stranger.api('/datasets?limit=100'), 200);
    assert.ok(!theirs.datasets.some((x: { id: string }) => x.id === d.id));
    assert.ok(theirs.datasets.every((x: { visibility: string; owner: string }) => x.visibility === 'public' || x.owner === stranger.user.username));
    // Even a stranger's PATCH finds nothing rather than learning the id exists.
    assert.equal((await json(await stranger.api(`/datasets/${d.id}`, patch({ name: 'mine now' })), 404)).error, 'dataset_not_found');
    // A member sees it as its owner does, in the list too; removed, they get the unknown id's answer again.
    const member = await createAccount(server);
    await json(await owner.api(`/datasets/${d.id}/members/${member.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'reader' }) }), 201);
    assert.equal((await json(await member.api(`/datasets/${d.id}`), 200)).name, 'secret');
    assert.ok((await json(await member.api('/datasets?limit=100'), 200)).datasets.some((x: { id: string }) => x.id === d.id));
    assert.equal((await json(await member.api(`/datasets/${d.id}`, patch({ name: 'mine now' })), 403)).error, 'forbidden');
    assert.equal((await owner.api(`/datasets/${d.id}/members/${member.user.username}`, { method: 'DELETE' })).status, 204);
    assert.deepEqual(await json(await member.api(`/datasets/${d.id}`), 404), await json(await member.api('/datasets/nd999999'), 404).then((b) => ({ ...b, message: b.message.replace('nd999999', d.id) })));
    assert.ok(!(await json(await member.api('/datasets?limit=100'), 200)).datasets.some((x: { id: string }) => x.id === d.id));
  });

  it('pages with an opaque cursor, each dataset once, newest first', async () => {
    const pager = await createUploader(server);
    for (let i = 0; i < 7; i++) await json(await pager.api('/datasets', post({ name: `p${i}` })), 201);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { datasets: Array<{ id: string }>; next_cursor: string | null } = await json(await pager.api(`/users/me/datasets?limit=3${cursor ? `&cursor=${cursor}` : ''}`), 200);
      assert.ok(page.datasets.length <= 3);
      seen.push(...page.datasets.map((d) => d.id));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(seen.length, 7);
    assert.deepEqual(seen, [...seen].sort().reverse());
    assert.equal((await json(await pager.api('/datasets?limit=101'), 400)).error, 'validation_failed');
    assert.equal((await json(await pager.api('/datasets?cursor=bogus'), 400)).error, 'validation_failed');
    const anonymous = await json(await fetch(`${server.url}/datasets`), 200);
    assert.ok(anonymous.datasets.every((d: { visibility: string }) => d.visibility === 'public'));
  });

  it('resolves external ids and repository names, but not to a private dataset of someone else', async () => {
    const pub = (await json(await fetch(`${server.url}/datasets/resolve/openneuro:ds004504`), 200)).id;
    assert.match(pub, /^nd/);
    const d = await json(await owner.api('/datasets', post({ name: 'repo', source_repo: 'https://github.com/neuro-lab/ds-rest.git', external_ids: ['osf:abc12'] })), 201);
    assert.equal((await json(await owner.api('/datasets/resolve/neuro-lab/ds-rest'), 200)).id, d.id);
    assert.equal((await json(await owner.api('/datasets/resolve/osf:abc12'), 200)).id, d.id);
    assert.equal((await json(await stranger.api('/datasets/resolve/osf:abc12'), 404)).error, 'dataset_not_found');
    assert.equal((await json(await owner.api('/datasets', post({ name: 'dup', external_ids: ['osf:abc12'] })), 409)).error, 'conflict');
  });

  it('says an external id of a private dataset is taken without naming the dataset to a stranger; its owner and admins are told which', async () => {
    const hidden = await json(await owner.api('/datasets', post({ name: 'hidden', external_ids: ['osf:hidden1'] })), 201);
    const own = await json(await stranger.api('/datasets', post({ name: 'mine' })), 201);
    // Creation and PATCH alike: the stranger learns that the id is taken, not by which (private) dataset.
    for (const res of [await stranger.api('/datasets', post({ name: 'probe', external_ids: ['osf:hidden1'] })), await stranger.api(`/datasets/${own.id}`, patch({ external_ids: ['osf:hidden1'] }))]) {
      assert.equal(res.status, 409);
      const text = await res.text();
      assert.equal(JSON.parse(text).error, 'conflict');
      assert.match(text, /osf:hidden1 is taken/);
      assert.doesNotMatch(text, new RegExp(hidden.id), 'the private dataset is not named');
    }
    // Those who may see it are told which dataset holds it.
    for (const who of [owner, admin]) {
      const res = await json(await who.api('/datasets', post({ name: 'dup', external_ids: ['osf:hidden1'] })), 409);
      assert.match(res.message, new RegExp(`already names dataset ${hidden.id}`));
    }
    // A public dataset's external ids are public: anyone is told which dataset.
    const open = await json(await admin.api('/datasets', post({ name: 'open', visibility: 'public', external_ids: ['osf:open1'] })), 201);
    assert.match((await json(await stranger.api('/datasets', post({ name: 'dup', external_ids: ['osf:open1'] })), 409)).message, new RegExp(`already names dataset ${open.id}`));
  });

  it('lets the owner PATCH fields; only an admin makes a public dataset private, which tells the gateway', async () => {
    const d = await json(await owner.api('/datasets', post({ name: 'before' })), 201);
    const changed = await json(await owner.api(`/datasets/${d.id}`, patch({ name: 'after', keywords: ['a', 'b'], license: null })), 200);
    assert.deepEqual([changed.name, changed.keywords, changed.license], ['after', ['a', 'b'], null]);
    assert.equal((await json(await stranger.api(`/datasets/${d.id}`, patch({ name: 'x' })), 404)).error, 'dataset_not_found');
    assert.equal((await json(await owner.api(`/datasets/${d.id}`, patch({ visibility: 'public' })), 403)).error, 'forbidden');
    assert.equal((await json(await admin.api(`/datasets/${d.id}`, patch({ visibility: 'public' })), 403)).error, 'forbidden');

    const gone: string[] = [];
    server.deps.hooks.datasetVisibilityChanged.push((id) => void gone.push(id));
    const pub = await json(await admin.api('/datasets', post({ name: 'public one', visibility: 'public' })), 201);
    await json(await admin.api(`/datasets/${pub.id}`, patch({ owner: 'ignored' })), 200);
    const other = await json(await stranger.api(`/datasets/${pub.id}`, patch({ visibility: 'private' })), 403);
    assert.equal(other.error, 'forbidden');
    const hidden = await json(await admin.api(`/datasets/${pub.id}`, patch({ visibility: 'private' })), 200);
    assert.equal(hidden.visibility, 'private');
    assert.deepEqual(gone, [pub.id]);
    assert.equal((await json(await stranger.api(`/datasets/${pub.id}`), 404)).error, 'dataset_not_found');
    const audit = await server.deps.db.selectFrom('audit_log').selectAll().where('action', '=', 'dataset.visibility').execute();
    assert.deepEqual(audit.map((a) => [a.target, a.actor_username]), [[pub.id, admin.user.username]]);
  });

  it('deletes a dataset with its versions and objects for an admin, idempotently, with an audit entry', async () => {
    const d = await json(await owner.api('/datasets', post({ name: 'doomed' })), 201);
    const bytes = Buffer.from('hello');
    const sha = (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex');
    await server.deps.objects.put(`${d.id}/objects/${sha}`, bytes, { sha256: sha });
    await server.deps.objects.put(`${d.id}/zarr/index.json`, '{}');
    await json(await owner.api(`/datasets/${d.id}/versions`, post({ version: '1.0.0', manifest: [{ path: 'a.txt', size: 5, sha256: sha }] })), 201);
    // The version dispatched a conversion; one still running when the row goes removes the Zarr copy itself,
    // which would take index.json out of the count below (seen on the PostgreSQL server).
    await server.worker?.idle();
    const gone: string[] = [];
    server.deps.hooks.datasetVisibilityChanged.push((id) => void gone.push(id));

    assert.equal((await json(await owner.api(`/admin/datasets/${d.id}`, { method: 'DELETE' }), 403)).error, 'admin_required');
    const first = await json(await admin.api(`/admin/datasets/${d.id}`, { method: 'DELETE' }), 200);
    assert.deepEqual(first, { id: d.id, deleted: true, objects_deleted: 3 });
    const again = await json(await admin.api(`/admin/datasets/${d.id}`, { method: 'DELETE' }), 200);
    assert.deepEqual(again, { id: d.id, deleted: false, objects_deleted: 0 });
    assert.deepEqual(gone, [d.id, d.id]);
    assert.equal((await json(await owner.api(`/datasets/${d.id}`), 404)).error, 'dataset_not_found');
    assert.equal((await server.deps.db.selectFrom('dataset_versions').select('version').where('dataset_id', '=', d.id).execute()).length, 0);
    const left: string[] = [];
    for await (const o of server.deps.objects.list(`${d.id}/`)) left.push(o.key);
    assert.deepEqual(left, []);
    const audit = await server.deps.db.selectFrom('audit_log').select(['target', 'action']).where('action', '=', 'dataset.delete').execute();
    assert.equal(audit.filter((a) => a.target === d.id).length, 2);
  });
});
