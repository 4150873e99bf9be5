import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findUserByEmail, findUserByUsername } from '../../src/accounts/users.js';
import { createAccount } from '../support/accounts.js';
import { latestMailTo, mailsTo, signInCodeFor } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('legacy account routes', () => {
  let server: TestServer;
  let n = 0;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const unique = (what: string) => `${what}-${process.pid}-${++n}`;
  const post = (p: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  // Each test that sends mail starts a fresh rate-limit window.
  const freshWindow = () => server.clock.advance(16 * 60_000);

  function assertDeprecated(res: Response, successor: string) {
    assert.match(res.headers.get('deprecation') ?? '', /^@\d+$/, 'RFC 9745 Deprecation header');
    assert.equal(res.headers.get('link'), `<${server.url}${successor}>; rel="successor-version"`);
  }

  async function signUp(password = 'correct horse battery') {
    freshWindow();
    const username = unique('legacy');
    const email = `${username}@example.org`;
    const res = await post('/auth/signup', { username, email, password });
    assert.equal(res.status, 201, await res.clone().text());
    assertDeprecated(res, '/auth/code/request');
    return { username, email, password, res };
  }

  it('signup creates a pending person account with a password and mails a verification code', async () => {
    const { username, email, res } = await signUp();
    const body = await res.json();
    assert.equal(body.user.username, username);
    assert.equal(body.user.status, 'pending');
    const user = await findUserByEmail(server.deps.db, email);
    assert.ok(user?.password_hash && !user.password_hash.includes('correct horse'));
    const code = await signInCodeFor(server, email);
    const verified = await post('/auth/code/verify', { email, code }, { origin: server.url });
    assert.equal(verified.status, 200);
    assert.equal((await findUserByEmail(server.deps.db, email))?.status, 'verified');
  });

  it('signup with an address an account uses answers as a new address does, makes nothing, and mails the address a notice', async () => {
    // The deprecated sign-up was the one route that told whether an address has an account (409 email_taken).
    const known = await createAccount(server, { status: 'verified' });
    const knownBefore = await findUserByEmail(server.deps.db, known.user.email);
    const { res: fresh } = await signUp();
    freshWindow();
    const username = unique('legacy');
    const mailsBefore = (await mailsTo(server, known.user.email)).length;
    const typed = known.user.email.toUpperCase();
    const taken = await post('/auth/signup', { username, email: typed, password: 'correct horse battery' });

    assert.equal(taken.status, fresh.status);
    assertDeprecated(taken, '/auth/code/request');
    const [a, b] = [await fresh.json(), await taken.json()];
    // Field by field, but for what the caller sent (username, address) and the moment.
    const sent = (body: { user: { username: string; email: string; created_at: string }; message: string }) => ({
      ...body,
      user: { ...body.user, username: '<username>', email: '<email>', created_at: '<time>' },
      message: body.message.replace(body.user.email, '<email>'),
    });
    assert.deepEqual(sent(b), sent(a));
    assert.deepEqual([b.user.username, b.user.email], [username, typed]);
    assert.ok(Math.abs(Date.parse(b.user.created_at) - Date.parse(a.user.created_at)) < 60_000, `${b.user.created_at} is not of the clock of ${a.user.created_at}`);

    assert.equal(await findUserByUsername(server.deps.db, username), undefined, 'no account was made');
    assert.deepEqual(await findUserByEmail(server.deps.db, known.user.email), knownBefore, 'the account of the address is untouched');
    const notice = await latestMailTo(server, known.user.email, mailsBefore);
    assert.match(notice.subject, /tried to sign up/);
    assert.match(notice.text, /\/login\?step=code/);
    assert.doesNotMatch(notice.text, /\b\d{6}\b/, 'no code: the attempt signs nobody in');
  });

  it('of two sign-ups of one new address at once, both answer alike and one account is made', async () => {
    freshWindow();
    const email = `${unique('twice')}@example.org`;
    const names = [unique('first'), unique('second')];
    const answers = await Promise.all(names.map((username) => post('/auth/signup', { username, email, password: 'correct horse battery' })));
    assert.deepEqual(answers.map((r) => r.status), [201, 201]);
    const made = await Promise.all(names.map((username) => findUserByUsername(server.deps.db, username)));
    assert.equal(made.filter(Boolean).length, 1);
  });

  it('signup refuses a taken username with 409, a short password with 400, both still marked deprecated', async () => {
    const known = await createAccount(server);
    freshWindow();
    const taken = await post('/auth/signup', { username: known.user.username, email: `${unique('x')}@example.org`, password: 'long enough pw' });
    assert.equal(taken.status, 409);
    assert.equal((await taken.json()).error, 'username_taken');
    assertDeprecated(taken, '/auth/code/request');
    const short = await post('/auth/signup', { username: unique('short'), email: `${unique('s')}@example.org`, password: 'short' });
    assert.equal(short.status, 400);
    assert.equal((await short.json()).error, 'validation_failed');
    assertDeprecated(short, '/auth/code/request');
  });

  it('resend-verification mails a new code to a pending account, answers the same for anyone, and is not deprecated', async () => {
    const { email } = await signUp();
    const before = (await mailsTo(server, email)).length;
    freshWindow();
    const res = await post('/auth/resend-verification', { email });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('deprecation'), null);
    const mine = await res.json();
    await latestMailTo(server, email, before);
    const stranger = await post('/auth/resend-verification', { email: `${unique('nobody')}@example.org` });
    assert.deepEqual(await stranger.json(), mine);
  });

  it('retrieve-key mints a working key for a verified account and revokes the one it minted before', async () => {
    const { email, password } = await signUp();
    await server.deps.db.updateTable('users').set({ status: 'verified' }).where('email', '=', email).execute();
    const first = await post('/auth/retrieve-key', { email, password });
    assert.equal(first.status, 200);
    assertDeprecated(first, '/auth/device/start');
    const { api_key: k1 } = await first.json();
    const second = await (await post('/auth/retrieve-key', { email, password })).json();
    const me = (key: string) => fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal((await me(second.api_key)).status, 200);
    assert.equal((await me(k1)).status, 401, 'the earlier legacy key is revoked');
    const wrong = await post('/auth/retrieve-key', { email, password: 'not the password' });
    assert.equal(wrong.status, 401);
    assert.equal((await wrong.json()).error, 'invalid_credentials');
    assertDeprecated(wrong, '/auth/device/start');
  });

  it('retrieve-key refuses a pending account with account_pending', async () => {
    const { email, password } = await signUp();
    const res = await post('/auth/retrieve-key', { email, password });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error, 'account_pending');
  });

  /** Asks for a key-regeneration link for a new verified account; its token, and a count of the account's live keys. */
  async function regenerationLink() {
    const account = await createAccount(server, { status: 'verified' });
    freshWindow();
    const asked = await post('/auth/request-key-regeneration', { email: account.user.email });
    assert.equal(asked.status, 200);
    assertDeprecated(asked, '/auth/device/start');
    const mail = await latestMailTo(server, account.user.email);
    const link = /(http\S+confirm-key-regeneration\?token=\S+)/.exec(mail.text)?.[1];
    assert.ok(link, mail.text);
    const liveKeys = async () =>
      (await server.deps.db.selectFrom('api_keys').select('id').where('user_id', '=', account.user.id).where('revoked_at', 'is', null).execute()).length;
    return { account, link, token: new URL(link).searchParams.get('token')!, liveKeys };
  }

  it('a GET of the mailed link, whatever it accepts (a mail scanner sends */*), shows the confirmation page and mints nothing', async () => {
    const { link, liveKeys } = await regenerationLink();
    const before = await liveKeys();
    for (const accept of ['*/*', 'application/json', 'text/html', undefined]) {
      const res = await fetch(link, { headers: accept === undefined ? {} : { accept } });
      assert.equal(res.status, 200, `Accept: ${accept}`);
      assertDeprecated(res, '/auth/device/start');
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, `Accept: ${accept}`);
      const text = await res.text();
      assert.match(text, /Show my new key/, `Accept: ${accept}`);
      assert.doesNotMatch(text, /nds_[A-Za-z0-9_-]{20,}/, 'no key in the page');
    }
    assert.equal(await liveKeys(), before, 'no key was minted by the GETs');
  });

  it('after a scanner\'s GET, the page\'s POST from the own origin mints the key once; the link is then used up', async () => {
    const { account, link, token, liveKeys } = await regenerationLink();
    assert.equal((await fetch(link, { headers: { accept: '*/*' } })).status, 200);
    const form = (origin: string) =>
      fetch(`${server.url}/auth/confirm-key-regeneration`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin }, body: `token=${token}` });
    const shown = await form(server.url);
    assert.equal(shown.status, 200);
    assertDeprecated(shown, '/auth/device/start');
    const key = /id="new-key">(nds_[A-Za-z0-9_-]+)</.exec(await shown.text())?.[1];
    assert.ok(key);
    const me = await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal((await me.json()).username, account.user.username);
    assert.equal(await liveKeys(), 2, 'the test key and the new one');
    assert.equal((await form(server.url)).status, 410);
    assert.match(await (await fetch(link, { headers: { accept: 'text/html' } })).text(), /not valid/);
  });

  it('a JSON client posts the token and gets the key as JSON, once', async () => {
    const { account, token } = await regenerationLink();
    const used = await post('/auth/confirm-key-regeneration', { token }, { accept: 'application/json' });
    assert.equal(used.status, 200);
    assertDeprecated(used, '/auth/device/start');
    const grant = await used.json();
    assert.match(grant.api_key, /^nds_/);
    assert.equal(grant.user.username, account.user.username);
    const again = await post('/auth/confirm-key-regeneration', { token }, { accept: 'application/json' });
    assert.equal(again.status, 410);
    assert.equal((await again.json()).error, 'link_invalid');
    assertDeprecated(again, '/auth/device/start');
  });

  it('the button of the link page posts the token and shows the key once; a foreign Origin is refused', async () => {
    const account = await createAccount(server, { status: 'verified' });
    freshWindow();
    await post('/auth/request-key-regeneration', { email: account.user.email });
    const token = /token=(\S+)/.exec((await latestMailTo(server, account.user.email)).text)![1];
    const form = (origin: string) =>
      fetch(`${server.url}/auth/confirm-key-regeneration`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', origin }, body: `token=${token}` });
    assert.equal((await form('https://evil.example')).status, 403);
    const json = await post('/auth/confirm-key-regeneration', { token }, { origin: 'https://evil.example' });
    assert.equal(json.status, 403, 'a foreign page cannot drive the JSON variant either');
    const shown = await form(server.url);
    assert.equal(shown.status, 200);
    const key = /id="new-key">(nds_[A-Za-z0-9_-]+)</.exec(await shown.text())?.[1];
    assert.ok(key);
    assert.equal((await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
    assert.equal((await form(server.url)).status, 410);
  });

  it('asking for a regeneration link answers the same for an unknown address and mails nothing', async () => {
    freshWindow();
    const email = `${unique('ghost')}@example.org`;
    const res = await post('/auth/request-key-regeneration', { email });
    assert.equal(res.status, 200);
    assert.equal((await mailsTo(server, email)).length, 0);
  });
});
