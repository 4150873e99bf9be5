/**
 * Sign-in as an attacker tries it: a password set by whoever registered someone else's address first, the
 * mailed codes read from the server's log, and wrong passwords counted twice by naming one account two ways.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/core/secrets.js';
import { createUser } from '../../src/accounts/users.js';
import { createAccount } from '../support/accounts.js';
import { latestMailTo, mailsTo, signInCodeFor } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('sign-in against an attacker', () => {
  let server: TestServer;
  let logs = '';
  let n = 0;
  before(async () => {
    const sink = new PassThrough();
    sink.on('data', (chunk) => (logs += chunk.toString()));
    server = await startTestServer({
      env: { LOG_LEVEL: 'info', IN_PROCESS_WORKER: 'false' },
      logDestination: sink,
    });
  });
  after(() => server.close());

  const unique = (what: string) => `${what}-${process.pid}-${++n}`;
  // Each test starts a fresh rate-limit window, so the tests do not limit each other.
  const freshWindow = () => server.clock.advance(16 * 60_000);

  function post(p: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
    return fetch(`${server.url}${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url, ...headers },
      body: JSON.stringify(body),
      redirect: 'manual',
    });
  }

  it('pre-registration takeover: a password set by whoever first registered an address stops working once its owner verifies it by mail', async () => {
    freshWindow();
    const email = `${unique('victim')}@example.org`;
    const attackerPassword = 'attacker-knows-this-1';
    // 1. The attacker registers the victim's address through the legacy sign-up, with a password of theirs.
    const signup = await post('/auth/signup', { username: unique('squat'), email, password: attackerPassword });
    assert.equal(signup.status, 201);
    const squatted = ((await signup.json()) as { user: { username: string } }).user.username;

    // 2. Later the victim signs up (or signs in) on /signup with a mailed code, as documented.
    const before = (await mailsTo(server, email)).length;
    assert.equal((await post('/auth/code/request', { email, username: unique('victim') })).status, 200);
    const code = await signInCodeFor(server, email, before);
    const verified = await post('/auth/code/verify', { email, code });
    assert.equal(verified.status, 200);
    const account = ((await verified.json()) as { user: { username: string; status: string } }).user;
    assert.equal(account.status, 'verified');

    // 3. The attacker signs into the now verified account with the password they chose.
    const login = await post('/auth/password/login', { login: squatted, password: attackerPassword });
    const key = await post('/auth/retrieve-key', { email, password: attackerPassword });
    assert.notEqual(login.status, 200, `the attacker's pre-set password signs into ${account.username} after the victim verified it`);
    assert.notEqual(key.status, 200, 'the attacker gets an API key of the victim-verified account');
  });

  it("pre-registration takeover by a session: one opened with the squatter's password while the account was pending ends when the owner asks for a code, and a pending account's sessions end when it is verified", async () => {
    freshWindow();
    const email = `${unique('victim')}@example.org`;
    const password = 'attacker-knows-this-2';
    const cookieOf = (res: Response) => res.headers.getSetCookie()[0]!.split(';')[0]!;
    // The attacker registers the victim's address with a password of theirs and signs in while it is pending.
    assert.equal((await post('/auth/signup', { username: unique('squat'), email, password })).status, 201);
    const first = await post('/auth/password/login', { login: email, password });
    assert.equal(first.status, 200);
    const squatterCookie = cookieOf(first);
    // A pending account's session is known (403 account_pending, not 401): it becomes the account's once verified.
    assert.equal((await fetch(`${server.url}/users/me`, { headers: { cookie: squatterCookie } })).status, 403);

    // The owner of the address asks for a code: the password goes, and the session it opened with it.
    const before = (await mailsTo(server, email)).length;
    assert.equal((await post('/auth/code/request', { email })).status, 200);
    const meAfterRequest = await fetch(`${server.url}/users/me`, { headers: { cookie: squatterCookie } });
    assert.equal(meAfterRequest.status, 401, "the squatter's session outlives the owner's request for a code");

    // The owner verifies; the new session is theirs, and nothing the squatter held reaches the account.
    const code = await signInCodeFor(server, email, before);
    const verified = await post('/auth/code/verify', { email, code });
    assert.equal(verified.status, 200);
    const ownerCookie = cookieOf(verified);
    const me = await fetch(`${server.url}/users/me`, { headers: { cookie: ownerCookie } });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { status: string }).status, 'verified');
    assert.equal((await fetch(`${server.url}/users/me`, { headers: { cookie: squatterCookie } })).status, 401);
    assert.notEqual((await post('/auth/keys', { name: 'stolen' }, { cookie: squatterCookie })).status, 201);
  });

  // The sign-up's own code keeps its password (docs/security.md): a session opened with it before still ends.
  it("a pending account's session ends when the account is verified, even by the sign-up's own code", async () => {
    freshWindow();
    const email = `${unique('pending')}@example.org`;
    const password = 'pending-password-3';
    const before = (await mailsTo(server, email)).length;
    assert.equal((await post('/auth/signup', { username: unique('pending'), email, password })).status, 201);
    const code = await signInCodeFor(server, email, before);
    const pendingLogin = await post('/auth/password/login', { login: email, password });
    assert.equal(pendingLogin.status, 200);
    const pendingCookie = pendingLogin.headers.getSetCookie()[0]!.split(';')[0]!;
    const verified = await post('/auth/code/verify', { email, code });
    assert.equal(verified.status, 200);
    assert.equal((await fetch(`${server.url}/users/me`, { headers: { cookie: pendingCookie } })).status, 401);
    // The password was the sign-up's own: it still signs in, into a fresh session.
    assert.equal((await post('/auth/password/login', { login: email, password })).status, 200);
  });

  it('mailed sign-in codes are not written to the logs (the mail subject carries the code)', async () => {
    freshWindow();
    const alice = await createAccount(server, { status: 'verified' });
    const before = (await mailsTo(server, alice.user.email)).length;
    assert.equal((await post('/auth/code/request', { email: alice.user.email })).status, 200);
    const code = await signInCodeFor(server, alice.user.email, before);
    const line = logs.split('\n').find((l) => l.includes(code));
    assert.equal(line, undefined, `the live sign-in code is in the log: ${line}`);
  });

  it("a taken username is refused alike with its own account's address, another account's and an unknown one: the answer never tells which address a public name signs in with", async () => {
    freshWindow();
    const named = await createAccount(server, { status: 'verified' });
    const other = await createAccount(server, { status: 'verified' });
    const answers = [];
    for (const email of [named.user.email, other.user.email, `${unique('nobody')}@example.org`]) {
      const res = await post('/auth/code/request', { email, username: named.user.username });
      answers.push({ status: res.status, body: await res.json() });
    }
    // A guess of the right address answered 200 (and mailed a code) where any other answered 409.
    assert.deepEqual(answers, Array(3).fill({ status: 409, body: answers[2]!.body }));
    assert.equal(answers[2]!.body.error, 'username_taken');
    assert.equal((await mailsTo(server, named.user.email)).length, 0, 'the right guess mails nothing either');
  });

  it("a free username with an address an account uses signs that account in, under its own name", async () => {
    freshWindow();
    const known = await createAccount(server, { status: 'verified' });
    const free = unique('free');
    assert.equal((await post('/auth/code/request', { email: known.user.email, username: free })).status, 200);
    const verified = await post('/auth/code/verify', { email: known.user.email, code: await signInCodeFor(server, known.user.email) });
    assert.equal(((await verified.json()) as { user: { username: string } }).user.username, known.user.username);
    assert.equal((await post('/auth/code/request', { email: `${unique('x')}@example.org`, username: free })).status, 200, 'the free name stays free');
  });

  it("a stranger's sign-up with someone's address does not choose the account's name: its owner, asking with a name of their own, verifies into that name", async () => {
    freshWindow();
    const email = `${unique('pi')}@lab.example`;
    const strangers = unique('famous-lab');
    const owners = unique('pi-lab');
    // A stranger starts a sign-up with the address and a name of their choosing (usernames are public, never renamed).
    assert.equal((await post('/auth/code/request', { email, username: strangers })).status, 200);
    // Later the address's owner signs up with the name they want, and types the code they are mailed.
    freshWindow();
    const before = (await mailsTo(server, email)).length;
    assert.equal((await post('/auth/code/request', { email, username: owners })).status, 200);
    const mail = await latestMailTo(server, email, before);
    assert.match(mail.text, new RegExp(`code for ${owners} `), 'the mail names the account the code makes');
    const verified = await post('/auth/code/verify', { email, code: await signInCodeFor(server, email, before) });
    assert.equal(verified.status, 200);
    const user = ((await verified.json()) as { user: { username: string; status: string } }).user;
    assert.deepEqual(user, { ...user, username: owners, status: 'verified' });
    // The stranger's name is free again.
    assert.equal((await post('/auth/code/request', { email: `${unique('x')}@example.org`, username: strangers })).status, 200);
  });

  it('a name taken between the code and its verification is refused clearly, and another name can be asked for', async () => {
    freshWindow();
    const email = `${unique('slow')}@lab.example`;
    assert.equal((await post('/auth/code/request', { email, username: unique('first') })).status, 200);
    const wanted = unique('wanted');
    const before = (await mailsTo(server, email)).length;
    assert.equal((await post('/auth/code/request', { email, username: wanted })).status, 200);
    const code = await signInCodeFor(server, email, before);
    await createAccount(server, { username: wanted, status: 'verified' });
    const refused = await post('/auth/code/verify', { email, code });
    assert.equal(refused.status, 409);
    const body = (await refused.json()) as { error: string; message: string };
    assert.equal(body.error, 'username_taken');
    assert.match(body.message, new RegExp(`${wanted} was taken after your code was sent\\. Ask for a new code with another username`));
    const again = unique('another');
    const before2 = (await mailsTo(server, email)).length;
    assert.equal((await post('/auth/code/request', { email, username: again })).status, 200);
    const verified = await post('/auth/code/verify', { email, code: await signInCodeFor(server, email, before2) });
    assert.equal(((await verified.json()) as { user: { username: string } }).user.username, again);
  });

  it("a password given at a sign-up survives only verification by that sign-up's own code: a resent code, which anyone may ask for, verifies without it", async () => {
    freshWindow();
    const email = `${unique('resent')}@example.org`;
    const password = 'stranger-chose-this-4';
    assert.equal((await post('/auth/signup', { username: unique('squat'), email, password })).status, 201);
    const before = (await mailsTo(server, email)).length;
    assert.equal((await post('/auth/resend-verification', { email })).status, 200);
    const mail = await latestMailTo(server, email, before);
    assert.match(mail.text, /without the password given at the sign-up/);
    assert.equal((await post('/auth/code/verify', { email, code: await signInCodeFor(server, email, before) })).status, 200);
    assert.equal((await post('/auth/password/login', { login: email, password })).status, 401, "the sign-up's password signs into the account a resent code verified");
  });

  it('wrong-password limit per account: naming the account by its email does not give a second budget after the username one is spent', async () => {
    freshWindow();
    const username = unique('pw');
    const email = `${username}@example.org`;
    await createUser(server.deps.db, { username, email, status: 'verified', kind: 'person', passwordHash: await hashPassword('right-password-1') }, server.clock.now());
    for (let i = 0; i < 10; i++) assert.equal((await post('/auth/password/login', { login: username, password: `wrong-${i}` })).status, 401);
    assert.equal((await post('/auth/password/login', { login: username, password: 'wrong-x' })).status, 429);
    const byEmail = await post('/auth/password/login', { login: email, password: 'wrong-y' });
    const byRetrieve = await post('/auth/retrieve-key', { email, password: 'wrong-z' });
    assert.equal(byEmail.status, 429, 'the same account takes 10 more guesses named by its email');
    assert.equal(byRetrieve.status, 429);
  });
});
