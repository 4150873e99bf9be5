/**
 * Who becomes the owner, who may sign in as what, and what an administrator may do to a higher role: the owner
 * is the operator who ran `nds admin bootstrap` (not whoever registered the username first), a service or test
 * account holds only the keys its owner mints, and an admin acts on no admin or owner.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mintApiKey } from '../../src/accounts/api-keys.js';
import { bootstrapOwner } from '../../src/accounts/bootstrap-owner.js';
import { createUser } from '../../src/accounts/users.js';
import { hashPassword } from '../../src/core/secrets.js';
import { apiFetch, createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('role boundaries', () => {
  let server: TestServer;
  let owner: TestAccount;
  let victim: TestAccount;
  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server, { role: 'owner' });
    victim = await createAccount(server, { kind: 'service' });
  });
  after(() => server.close());

  function post(p: string, body: unknown, cookie?: string): Promise<Response> {
    const headers = new Headers({ origin: server.url, 'content-type': 'application/json' });
    if (cookie) headers.set('cookie', cookie);
    return fetch(`${server.url}${p}`, { method: 'POST', headers, body: JSON.stringify(body), redirect: 'manual' });
  }
  const sessionCookie = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('nds_session='))?.split(';')[0];
  const userRow = (username: string) => server.deps.db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirstOrThrow();

  it('bootstrap refuses a username held by an account of another address, and the holder gains nothing', async () => {
    const squatter = await createAccount(server, { username: 'lab-owner', email: 'squatter@evil.example', status: 'verified' });
    const squatterBrowser = await createBrowserSession(server, squatter.user);
    await assert.rejects(bootstrapOwner(server.deps.db, { username: 'lab-owner', email: 'ops@lab.example' }, server.deps.clock.now()), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'username_taken');
      assert.match(err.message, /another address/);
      return true;
    });
    const row = await userRow('lab-owner');
    assert.deepEqual([row.role, row.email], ['member', 'squatter@evil.example']);
    assert.equal((await squatter.api(`/admin/users/${victim.user.username}/keys`, { method: 'POST', body: JSON.stringify({ name: 'stolen' }) })).status, 403);
    assert.equal((await squatterBrowser.fetch(`/admin/users/${victim.user.username}/keys`)).status, 403);
  });

  it("bootstrap over a pending sign-up of the operator's address ends what that sign-up opened, and its password", async () => {
    // Someone signed up with the operator's address and a password of their own, and signed in (a pending
    // account may, to finish verification).
    const signup = await post('/auth/signup', { username: 'nds-admin', email: 'ops@lab.example', password: 'squatted password' });
    assert.equal(signup.status, 201, await signup.clone().text());
    const login = await post('/auth/password/login', { login: 'nds-admin', password: 'squatted password' });
    assert.equal(login.status, 200);
    const cookie = sessionCookie(login)!;

    const { apiKey, created } = await bootstrapOwner(server.deps.db, { username: 'nds-admin', email: 'OPS@lab.example' }, server.deps.clock.now());
    assert.equal(created, false);
    const row = await userRow('nds-admin');
    assert.deepEqual([row.role, row.status, row.password_hash], ['owner', 'approved', null]);
    assert.equal((await fetch(`${server.url}/users/me`, { headers: { cookie } })).status, 401, "the sign-up's session ended");
    assert.equal((await post('/auth/password/login', { login: 'nds-admin', password: 'squatted password' })).status, 401, "the sign-up's password is gone");
    // The key the command printed is the owner's.
    assert.equal((await apiFetch(server, `/admin/users/${victim.user.username}/keys`, apiKey)).status, 200);
  });

  it('refuses a password sign-in of a service account, and a change of kind ends what the person held but not the keys the owner minted', async () => {
    const user = await createUser(server.deps.db, { username: 'lab-robot', email: 'robot@lab.example', status: 'approved', passwordHash: await hashPassword('correct horse') }, server.deps.clock.now());
    const loginBefore = await post('/auth/password/login', { login: 'lab-robot', password: 'correct horse' });
    assert.equal(loginBefore.status, 200);
    const cookieBefore = sessionCookie(loginBefore)!;
    const named = await post('/auth/keys', { name: 'laptop' }, cookieBefore);
    assert.equal(named.status, 201, await named.clone().text());
    const personKey = (await named.json()).api_key as string;
    // A key the owner minted while the account was a service account once before (the owner mints for no person).
    const ownerMintedKey = (await mintApiKey(server.deps.db, user.id, 'by the owner', 'admin')).apiKey;

    const changed = await owner.api(`/admin/users/${user.username}/kind`, { method: 'POST', body: JSON.stringify({ kind: 'service' }) });
    assert.equal(changed.status, 200, await changed.clone().text());

    assert.equal((await apiFetch(server, '/users/me', personKey)).status, 401, 'the key the person minted ended');
    assert.equal((await fetch(`${server.url}/users/me`, { headers: { cookie: cookieBefore } })).status, 401, 'the session the person opened ended');
    assert.equal((await apiFetch(server, '/users/me', ownerMintedKey)).status, 200, 'the key the owner minted lives on');
    assert.equal((await userRow('lab-robot')).live_key_count, 1);

    const wrong = await post('/auth/password/login', { login: 'lab-robot', password: 'wrong horse' });
    assert.equal(wrong.status, 401, 'a wrong password learns nothing of the kind');
    const loginAfter = await post('/auth/password/login', { login: 'lab-robot', password: 'correct horse' });
    assert.equal(loginAfter.status, 403);
    assert.equal((await loginAfter.json()).error, 'service_account');
    assert.equal(sessionCookie(loginAfter), undefined);
  });

  it("refuses an admin's limit on the owner's or another admin's storage, as it refuses their revocation", async () => {
    const admin = await createAccount(server, { role: 'admin' });
    const otherAdmin = await createAccount(server, { role: 'admin' });
    const member = await createAccount(server);
    for (const target of [owner, otherAdmin]) {
      assert.equal((await admin.api(`/admin/revoke/${target.user.username}`, { method: 'POST' })).status, 403);
      const quota = await admin.api(`/admin/users/${target.user.username}/storage-quota`, { method: 'POST', body: JSON.stringify({ quota_bytes: 1 }) });
      assert.equal(quota.status, 403, await quota.clone().text());
      assert.equal((await quota.json()).error, 'owner_required');
      assert.equal((await userRow(target.user.username)).storage_quota_bytes, null);
    }
    assert.equal((await admin.api(`/admin/users/${member.user.username}/storage-quota`, { method: 'POST', body: JSON.stringify({ quota_bytes: 1 }) })).status, 200);
    assert.equal((await owner.api(`/admin/users/${otherAdmin.user.username}/storage-quota`, { method: 'POST', body: JSON.stringify({ quota_bytes: 1 }) })).status, 200);
  });
});
