import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('admin routes for accounts', () => {
  let server: TestServer;
  let owner: TestAccount;
  let admin: TestAccount;
  let member: TestAccount;
  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server, { role: 'owner' });
    admin = await createAccount(server, { role: 'admin' });
    member = await createAccount(server);
  });
  after(() => server.close());

  const json = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

  it('lists users with status, tier, role, kind and open upload-access requests, for admins only', async () => {
    const asker = await createAccount(server, { status: 'verified' });
    await server.deps.db.updateTable('users').set({ upload_access_requested_at: new Date() }).where('id', '=', asker.user.id).execute();
    const res = await admin.api('/admin/users');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = await res.json();
    const row = body.users.find((u: { username: string }) => u.username === asker.user.username);
    assert.deepEqual(
      { status: row.status, tier: row.tier, role: row.role, kind: row.kind, upload_access_requested: row.upload_access_requested },
      { status: 'verified', tier: 'basic', role: 'member', kind: 'person', upload_access_requested: true },
    );
    assert.ok(body.open_requests.some((r: { username: string }) => r.username === asker.user.username));
    const filtered = await (await admin.api('/admin/users?kind=service')).json();
    assert.ok(filtered.users.every((u: { kind: string }) => u.kind === 'service'));
    const refused = await member.api('/admin/users');
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).error, 'admin_required');
    assert.equal((await fetch(`${server.url}/admin/users`)).status, 401);
  });

  it('shows one user; an unknown one is 404', async () => {
    const res = await admin.api(`/admin/users/${member.user.username}`);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).username, member.user.username);
    assert.equal((await admin.api('/admin/users/nobody-here')).status, 404);
  });

  it('approves a verified user (tier uploader) and refuses a pending one', async () => {
    const v = await createAccount(server, { status: 'verified' });
    const res = await admin.api(`/admin/approve/${v.user.username}`, { method: 'POST' });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.status, 'approved');
    assert.equal(body.tier, 'uploader');
    const p = await createAccount(server, { status: 'pending' });
    const pending = await admin.api(`/admin/approve/${p.user.username}`, { method: 'POST' });
    assert.equal(pending.status, 403);
    assert.equal((await pending.json()).error, 'account_pending');
  });

  it('revokes a user: keys stop working at once (401) and their device sign-in is refused', async () => {
    const r = await createAccount(server);
    assert.equal((await r.api('/users/me')).status, 200);
    const res = await admin.api(`/admin/revoke/${r.user.username}`, { method: 'POST' });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.status, 'revoked');
    assert.equal(body.keys_revoked, 1);
    assert.equal((await r.api('/users/me')).status, 401);
  });

  it('an admin cannot revoke another admin; the owner can', async () => {
    const other = await createAccount(server, { role: 'admin' });
    const res = await admin.api(`/admin/revoke/${other.user.username}`, { method: 'POST' });
    assert.equal(res.status, 403);
    assert.equal((await owner.api(`/admin/revoke/${other.user.username}`, { method: 'POST' })).status, 200);
    const self = await owner.api(`/admin/revoke/${owner.user.username}`, { method: 'POST' });
    assert.equal(self.status, 403);
  });

  it('kind change is owner only', async () => {
    const t = await createAccount(server);
    const byAdmin = await admin.api(`/admin/users/${t.user.username}/kind`, json({ kind: 'service' }));
    assert.equal(byAdmin.status, 403);
    assert.equal((await byAdmin.json()).error, 'owner_required');
    const byOwner = await owner.api(`/admin/users/${t.user.username}/kind`, json({ kind: 'service' }));
    assert.equal(byOwner.status, 200);
    assert.equal((await byOwner.json()).kind, 'service');
    const bad = await owner.api(`/admin/users/${t.user.username}/kind`, json({ kind: 'robot' }));
    assert.equal(bad.status, 400);
  });

  it('kind change is compare-and-set: a stale expected_kind is 409, and of 10 racing changes one wins', async () => {
    const t = await createAccount(server);
    const stale = await owner.api(`/admin/users/${t.user.username}/kind`, json({ kind: 'test', expected_kind: 'service' }));
    assert.equal(stale.status, 409);
    assert.equal((await stale.json()).error, 'kind_changed');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => owner.api(`/admin/users/${t.user.username}/kind`, json({ kind: i % 2 ? 'service' : 'test', expected_kind: 'person' }))),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.equal(statuses.filter((s) => s === 200).length, 1);
    assert.equal(statuses.filter((s) => s === 409).length, 9);
  });

  it('owner mints, lists and revokes keys of a service account; a person is refused with person_account', async () => {
    const svc = await createAccount(server, { kind: 'service' });
    const minted = await owner.api(`/admin/users/${svc.user.username}/keys`, json({ name: 'ci-runner' }));
    assert.equal(minted.status, 201);
    const { api_key, key } = await minted.json();
    const me = await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${api_key}` } });
    assert.equal((await me.json()).kind, 'service');
    const listed = await (await owner.api(`/admin/users/${svc.user.username}/keys`)).json();
    assert.ok(listed.keys.some((k: { id: number }) => k.id === key.id));
    const del = await owner.api(`/admin/users/${svc.user.username}/keys/${key.id}`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    const again = await owner.api(`/admin/users/${svc.user.username}/keys/${key.id}`, { method: 'DELETE' });
    assert.equal(again.status, 404);
    assert.equal((await again.json()).error, 'key_not_found');
    const person = await owner.api(`/admin/users/${member.user.username}/keys`, json({ name: 'x' }));
    assert.equal(person.status, 403);
    assert.deepEqual(await person.json(), { error: 'person_account', message: 'A person mints their own keys; this route is for service and test accounts.' });
    // Listing and revoking work on any kind.
    assert.equal((await owner.api(`/admin/users/${member.user.username}/keys`)).status, 200);
    const byAdmin = await admin.api(`/admin/users/${svc.user.username}/keys`, json({ name: 'x' }));
    assert.equal(byAdmin.status, 403);
  });

  it('writes every admin action to the audit log with actor, target and address', async () => {
    const t = await createAccount(server, { status: 'verified' });
    await admin.api(`/admin/approve/${t.user.username}`, { method: 'POST' });
    const { entries } = await (await admin.api('/admin/audit?limit=5')).json();
    const e = entries.find((x: { action: string; target: string }) => x.action === 'user.approve' && x.target === t.user.username);
    assert.ok(e, 'approve is in the audit log');
    assert.equal(e.actor_username, admin.user.username);
    assert.ok(e.ip);
    assert.ok(e.created_at);
  });
});
