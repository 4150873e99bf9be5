/**
 * Browser sessions do not grow without bound (`createSession`, src/accounts/sessions.ts): a right password is
 * never rate-limited, so one account signing in in a loop made a row a request, for ever. Now a sign-in keeps
 * the account's newest `MAX_SESSIONS_A_USER` (50) live sessions and deletes its expired ones, in the transaction
 * of its insert; `nds serve` also deletes every expired session hourly (`deleteExpiredSessions`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteExpiredSessions, MAX_SESSIONS_A_USER } from '../../src/accounts/sessions.js';
import { hashPassword, sha256Hex } from '../../src/core/secrets.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const DAY = 86_400_000;

describe('browser sessions of one account', () => {
  let server: TestServer;
  let account: TestAccount;

  before(async () => {
    server = await startTestServer();
    account = await createAccount(server, { status: 'verified' });
    await server.deps.db.updateTable('users').set({ password_hash: await hashPassword('correct horse battery') }).where('id', '=', account.user.id).execute();
  });
  after(() => server.close());

  const signIn = async () => {
    const res = await fetch(`${server.url}/auth/password/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: server.url }, body: JSON.stringify({ login: account.user.username, password: 'correct horse battery' }) });
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
    return /nds_session=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
  };
  const sessionsOf = async (userId: number) => (await server.deps.db.selectFrom('sessions').select('id_hash').where('user_id', '=', userId).execute()).map((r) => r.id_hash);

  /** `n` sessions of `userId` made `minutesAgo` minutes ago and before, one a minute, valid for `validDays` from now. */
  async function fill(userId: number, n: number, validDays: number): Promise<string[]> {
    const now = server.clock.now().getTime();
    const rows = Array.from({ length: n }, (_, i) => ({ id_hash: sha256Hex(`filled-${userId}-${validDays}-${i}`), user_id: userId, created_at: new Date(Date.now() - (n - i) * 60_000), expires_at: new Date(now + validDays * DAY) }));
    await server.deps.db.insertInto('sessions').values(rows).execute();
    return rows.map((r) => r.id_hash);
  }

  it(`are at most ${MAX_SESSIONS_A_USER} live: a sign-in past that ends the oldest`, async () => {
    assert.equal(MAX_SESSIONS_A_USER, 50);
    const filled = await fill(account.user.id, MAX_SESSIONS_A_USER + 5, 10);
    const token = await signIn();
    const kept = await sessionsOf(account.user.id);
    assert.equal(kept.length, MAX_SESSIONS_A_USER);
    assert.ok(kept.includes(sha256Hex(token)), 'the new session is kept');
    assert.deepEqual(kept.filter((h) => h !== sha256Hex(token)).sort(), filled.slice(6).sort(), 'the six oldest were ended');
    const me = await fetch(`${server.url}/users/me`, { headers: { cookie: `nds_session=${token}` } });
    assert.equal(me.status, 200);
  });

  it('are deleted once expired: the account\'s at its next sign-in, everyone\'s by the sweep', async () => {
    const other = await createAccount(server, { status: 'verified' });
    const otherLive = await fill(other.user.id, 3, 60);
    await fill(other.user.id, 4, 20);
    // 31 days on, every session of the account has expired; one more sign-in leaves it only that one.
    server.clock.advance(31 * DAY);
    const token = await signIn();
    assert.deepEqual(await sessionsOf(account.user.id), [sha256Hex(token)]);
    // The other account's expired sessions wait for the sweep, which keeps the live ones.
    assert.equal((await sessionsOf(other.user.id)).length, 7);
    assert.equal(await deleteExpiredSessions(server.deps.db, server.clock.now()), 4);
    assert.deepEqual((await sessionsOf(other.user.id)).sort(), otherLive.sort());
  });
});
