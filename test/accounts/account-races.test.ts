/**
 * A sign-in and a mint are checked, then made, apart (a password's slow hash lies between): what ends an
 * account's sessions and keys (bootstrap over a pending sign-up, a code request dropping its password, a change
 * to a service account, a revocation) must not be undone by a session or key made after it. A session is made
 * only if the account, read under its row lock, is still as the sign-in checked it (`createSession`), a key only
 * on a slot of a live person account (`mintApiKey`). The last two tests are the review's races over HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { changeUserKind, revokeUser } from '../../src/accounts/admin-users.js';
import { mintApiKey } from '../../src/accounts/api-keys.js';
import { bootstrapOwner } from '../../src/accounts/bootstrap-owner.js';
import { requestSignInCode } from '../../src/accounts/email-sign-in.js';
import { passwordLogin } from '../../src/accounts/password-login.js';
import { createSession } from '../../src/accounts/sessions.js';
import { createUser } from '../../src/accounts/users.js';
import { hashPassword } from '../../src/core/secrets.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const PASSWORD = 'squatted password';

describe('account changes racing sign-ins and mints', () => {
  let server: TestServer;
  let owner: TestAccount;
  let counter = 0;
  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server, { role: 'owner' });
  });
  after(() => server.close());

  const actor = () => ({ user: owner.user, ip: '127.0.0.1' });
  const person = async (status: 'pending' | 'approved') => {
    const username = `race-${process.pid}-${++counter}`;
    return createUser(server.deps.db, { username, email: `${username}@lab.example`, status, kind: 'person', passwordHash: await hashPassword(PASSWORD) }, server.clock.now());
  };
  const sessionsOf = async (userId: number) => (await server.deps.db.selectFrom('sessions').select('id_hash').where('user_id', '=', userId).execute()).length;
  /** The session a password sign-in checked before `change` would make after it. */
  const sessionAfter = async (username: string, change: () => Promise<unknown>) => {
    const checked = await passwordLogin(server.deps.db, username, PASSWORD);
    await change();
    return createSession(server.deps.db, checked.id, server.clock.now(), {}, { passwordHash: checked.password_hash });
  };

  it('makes no session for a password checked before bootstrap took the pending sign-up over', async () => {
    const user = await person('pending');
    await assert.rejects(sessionAfter(user.username, () => bootstrapOwner(server.deps.db, { username: user.username, email: user.email }, server.clock.now())), { code: 'invalid_credentials' });
    assert.equal(await sessionsOf(user.id), 0);
  });

  it("makes no session for a password checked before the address's owner asked for a code", async () => {
    const user = await person('pending');
    const mailDeps = { db: server.deps.db, mailer: server.deps.mailer, publicUrl: server.config.publicUrl };
    await assert.rejects(sessionAfter(user.username, () => requestSignInCode(mailDeps, { email: user.email }, server.clock.now())), { code: 'invalid_credentials' });
    assert.equal(await sessionsOf(user.id), 0);
  });

  it('makes no session for a sign-in checked before the account was made a service account, or revoked', async () => {
    const changed = await person('approved');
    await assert.rejects(sessionAfter(changed.username, () => changeUserKind(server.deps.db, actor(), changed.username, 'service', undefined, server.clock.now())), { code: 'service_account' });
    const revoked = await person('approved');
    await assert.rejects(sessionAfter(revoked.username, () => revokeUser(server.deps.db, actor(), revoked.username, server.clock.now())), { code: 'account_revoked' });
    assert.equal((await sessionsOf(changed.id)) + (await sessionsOf(revoked.id)), 0);
  });

  it('mints an account its own key only while it is a live person account; the owner still mints for a service account', async () => {
    const changed = await person('approved');
    await changeUserKind(server.deps.db, actor(), changed.username, 'service', undefined, server.clock.now());
    await assert.rejects(mintApiKey(server.deps.db, changed.id, 'laptop', 'named'), { code: 'service_account' });
    await assert.rejects(mintApiKey(server.deps.db, changed.id, 'device: laptop', 'device'), { code: 'service_account' });
    const revoked = await person('approved');
    await revokeUser(server.deps.db, actor(), revoked.username, server.clock.now());
    await assert.rejects(mintApiKey(server.deps.db, revoked.id, 'laptop', 'named'), { code: 'account_revoked' });
    const { row } = await mintApiKey(server.deps.db, changed.id, 'ci runner', 'admin');
    const counts = await server.deps.db.selectFrom('users').select(['id', 'live_key_count']).where('id', 'in', [changed.id, revoked.id]).orderBy('id').execute();
    assert.deepEqual(counts.map((u) => u.live_key_count), [1, 0], 'a refused mint takes no slot');
    assert.equal(row.origin, 'admin');
  });

  const login = (username: string) =>
    fetch(`${server.url}/auth/password/login`, {
      method: 'POST',
      headers: { origin: server.url, 'content-type': 'application/json' },
      body: JSON.stringify({ login: username, password: PASSWORD }),
      redirect: 'manual',
    });

  it('leaves the squatter of a pending sign-up no session of the owner account bootstrap makes of it (over HTTP)', async () => {
    const found: string[] = [];
    for (let round = 0; round < 4 && found.length === 0; round++) {
      const user = await person('pending');
      const logins = Array.from({ length: 10 }, (_, i) => new Promise((resolve) => setTimeout(resolve, i * 5)).then(() => login(user.username)));
      await new Promise((resolve) => setTimeout(resolve, 5 * round));
      await bootstrapOwner(server.deps.db, { username: user.username, email: user.email }, server.clock.now());
      for (const res of await Promise.all(logins)) {
        const cookie = res.headers.getSetCookie().find((c) => c.startsWith('nds_session='))?.split(';')[0];
        await res.body?.cancel();
        if (!cookie) continue;
        const me = await fetch(`${server.url}/users/me`, { headers: { cookie } });
        await me.body?.cancel();
        if (me.status === 200) found.push(`round ${round}: a sign-in answered ${res.status} and its session works after bootstrap`);
      }
    }
    assert.deepEqual(found, []);
  });

  it('leaves a person made a service account no key it minted during the change (over HTTP)', async () => {
    const leftovers: string[] = [];
    for (let round = 0; round < 10 && leftovers.length === 0; round++) {
      const member = await createAccount(server);
      const mints = Array.from({ length: 20 }, (_, i) => member.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: `laptop ${i}` }) }).then(async (res) => ({ status: res.status, body: await res.text() })));
      await new Promise((resolve) => setTimeout(resolve, round));
      const changed = await owner.api(`/admin/users/${member.user.username}/kind`, { method: 'POST', body: JSON.stringify({ kind: 'service' }) });
      assert.equal(changed.status, 200, await changed.text());
      await Promise.all(mints);
      const { rows } = await sql<{ name: string }>`
        select name from api_keys where user_id = ${member.user.id} and revoked_at is null and origin <> 'admin'`.execute(server.deps.db);
      for (const row of rows) leftovers.push(`round ${round}: "${row.name}" live after the change`);
    }
    assert.deepEqual(leftovers, []);
  });
});
