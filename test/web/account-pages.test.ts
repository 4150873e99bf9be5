import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, createBrowserSession } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('account pages (server-rendered, no JavaScript)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  type Browser = Awaited<ReturnType<typeof createBrowserSession>>;
  const get = (p: string, browser?: Browser) => fetch(`${server.url}${p}`, { headers: browser ? { cookie: browser.cookie } : {}, redirect: 'manual' });
  const form = (p: string, body: Record<string, string>, browser?: Browser, origin: string = server.url) =>
    fetch(`${server.url}${p}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...(browser ? { cookie: browser.cookie } : {}) },
      body: new URLSearchParams(body).toString(),
    });
  const startCode = async (machine = 'lab-pc') =>
    (await (await fetch(`${server.url}/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ machine_name: machine }) })).json()) as { device_code: string; user_code: string };
  const poll = async (deviceCode: string) =>
    (await fetch(`${server.url}/auth/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_code: deviceCode }) })).json();

  it('serves the stylesheet with an ETag and answers 304 to it', async () => {
    const res = await get('/assets/nds.css');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/css/);
    assert.match(await res.text(), /font/);
    const etag = res.headers.get('etag')!;
    assert.equal((await fetch(`${server.url}/assets/nds.css`, { headers: { 'if-none-match': etag } })).status, 304);
  });

  it('/login offers a mailed code and a password; the code step, errors in words, and escaping', async () => {
    const page = await (await get('/login')).text();
    assert.match(page, /<link rel="stylesheet" href="\/assets\/nds.css">/);
    assert.match(page, /action="\/auth\/code\/request"/);
    assert.match(page, /action="\/auth\/password\/login"/);
    const step = await (await get('/login?step=code&email=a%40example.org&error=login_code_invalid&next=%2Fdevice%3Fcode%3DBCDF-GHJK')).text();
    assert.match(step, /action="\/auth\/code\/verify"/);
    assert.match(step, /<input type="hidden" name="email" value="a@example.org">/);
    assert.match(step, /<input type="hidden" name="next" value="\/device\?code=BCDF-GHJK">/);
    assert.match(step, /That code is not right/);
    const hostile = await (await get('/login?step=code&email=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&error=__proto__&next=https%3A%2F%2Fevil.example')).text();
    assert.doesNotMatch(hostile, /<script>/);
    assert.match(hostile, /&quot;&gt;&lt;script&gt;/);
    assert.doesNotMatch(hostile, /evil\.example/);
    assert.doesNotMatch(hostile, /class="notice error"/);
  });

  it('/signup keeps what was typed and says why it was refused', async () => {
    const page = await (await get('/signup?error=username_taken&username=ada&email=ada%40example.org')).text();
    assert.match(page, /That username is taken/);
    assert.match(page, /name="username" value="ada"/);
    assert.match(page, /name="from" value="signup"/);
  });

  it('/account needs a session, lists live keys, revokes one by form, and mints a named key shown once', async () => {
    const signedOut = await get('/account');
    assert.equal(signedOut.status, 303);
    assert.equal(signedOut.headers.get('location'), '/login?next=%2Faccount');

    const account = await createAccount(server);
    const browser = await createBrowserSession(server, account.user);
    const page = await get('/account', browser);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('cache-control'), 'no-store');
    const text = await page.text();
    assert.match(text, new RegExp(account.user.username));
    assert.match(text, new RegExp(account.key.slice(0, 12)));
    assert.match(text, /action="\/auth\/logout"/);
    assert.match(text, /<dt>Storage<\/dt><dd>0 bytes \(no limit\); sandbox datasets: 0 bytes of 10 GiB<\/dd>/);
    const keyId = /action="\/account\/keys\/(\d+)\/revoke"/.exec(text)![1];

    assert.equal((await form(`/account/keys/${keyId}/revoke`, {}, browser, 'https://evil.example')).status, 403);
    assert.equal((await account.api('/users/me')).status, 200);
    const revoked = await form(`/account/keys/${keyId}/revoke`, {}, browser);
    assert.equal(revoked.status, 303);
    assert.equal(revoked.headers.get('location'), '/account?revoked=1');
    assert.equal((await account.api('/users/me')).status, 401);
    const again = await form(`/account/keys/${keyId}/revoke`, {}, browser);
    assert.equal(again.headers.get('location'), '/account?error=key_not_found');
    assert.match(await (await get('/account?error=key_not_found', browser)).text(), /Key not found or already revoked/);

    const minted = await form('/account/keys', { name: 'lab server' }, browser);
    assert.equal(minted.status, 200);
    const key = /id="new-key">(nds_[A-Za-z0-9_-]+)</.exec(await minted.text())![1];
    assert.equal((await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
    assert.doesNotMatch(await (await get('/account', browser)).text(), new RegExp(key));
  });

  it('a pending account signed in is sent to verify its address first', async () => {
    const pending = await createAccount(server, { status: 'pending' });
    const browser = await createBrowserSession(server, pending.user);
    for (const p of ['/account', '/device?code=BCDF-GHJK']) {
      const res = await get(p, browser);
      assert.equal(res.status, 303);
      const to = new URL(res.headers.get('location')!, server.url);
      assert.equal(to.pathname, '/login');
      assert.equal(to.searchParams.get('step'), 'verify');
      assert.equal(to.searchParams.get('email'), pending.user.email);
      assert.equal(to.searchParams.get('next'), p);
    }
    const verify = await (await get(`/login?step=verify&email=${encodeURIComponent(pending.user.email)}`, browser)).text();
    assert.match(verify, /not verified yet/);
    assert.match(verify, /action="\/auth\/code\/request"/);
  });

  it('/device shows the machine and the account, and Approve lets the terminal collect its key', async () => {
    const { device_code, user_code } = await startCode('lab-pc');
    const signedOut = await get(`/device?code=${user_code}`);
    assert.equal(signedOut.status, 303);
    assert.equal(new URL(signedOut.headers.get('location')!, server.url).searchParams.get('next'), `/device?code=${user_code}`);

    const account = await createAccount(server);
    const browser = await createBrowserSession(server, account.user);
    const typed = user_code.toLowerCase().replace('-', ' ');
    const page = await (await get(`/device?code=${encodeURIComponent(typed)}`, browser)).text();
    assert.match(page, /lab-pc/);
    assert.match(page, new RegExp(`<strong>${account.user.username}</strong>`));
    assert.match(page, new RegExp(user_code));
    assert.match(page, /action="\/device\/approve"/);
    assert.match(page, /action="\/device\/deny"/);

    assert.equal((await form('/device/approve', { code: user_code }, browser, 'https://evil.example')).status, 403);
    assert.equal((await poll(device_code)).error, 'authorization_pending');
    const approved = await form('/device/approve', { code: user_code }, browser);
    assert.equal(approved.status, 303);
    assert.equal(approved.headers.get('location'), '/device?result=approved');
    assert.match(await (await get('/device?result=approved', browser)).text(), /Approved/);
    const grant = await poll(device_code);
    assert.equal(grant.user.username, account.user.username);
  });

  it('Deny makes the terminal\'s poll fail with access_denied', async () => {
    const { device_code, user_code } = await startCode();
    const account = await createAccount(server);
    const browser = await createBrowserSession(server, account.user);
    const denied = await form('/device/deny', { code: user_code }, browser);
    assert.equal(denied.headers.get('location'), '/device?result=denied');
    const answer = await poll(device_code);
    assert.equal(answer.error, 'access_denied');
    assert.equal(answer.reason, 'device_code_denied');
    const reused = await form('/device/approve', { code: user_code }, browser);
    assert.equal(reused.headers.get('location'), '/device?error=device_code_denied');
    assert.match(await (await get('/device?error=device_code_denied', browser)).text(), /declined in the browser/);
  });

  it('refusals are shown in words: an unknown code, and a service account that cannot sign in', async () => {
    const account = await createAccount(server);
    const browser = await createBrowserSession(server, account.user);
    const unknown = await get('/device?code=ZZZZ-ZZZZ', browser);
    assert.equal(unknown.status, 404);
    assert.match(await unknown.text(), /That code was not found/);

    const { user_code } = await startCode();
    const service = await createAccount(server, { kind: 'service' });
    const serviceBrowser = await createBrowserSession(server, service.user);
    const page = await (await get(`/device?code=${user_code}`, serviceBrowser)).text();
    assert.match(page, /Service and test accounts cannot sign in this way/);
    assert.doesNotMatch(page, /action="\/device\/approve"/);
  });

  it('guessing codes on the page is cut off (rate_limited with Retry-After)', async () => {
    const account = await createAccount(server);
    const browser = await createBrowserSession(server, account.user);
    let last: Response | undefined;
    for (let i = 0; i < 11; i++) last = await get(`/device?code=ZZZZ-ZZZ${'BCDFGHJKLMN'[i]}`, browser);
    assert.equal(last!.status, 429);
    assert.ok(Number(last!.headers.get('retry-after')) > 0);
    assert.match(await last!.text(), /Too many requests/);
    const viaApi = await browser.fetch('/auth/device/lookup?code=ZZZZ-ZZZZ');
    assert.equal(viaApi.status, 429, 'the page and the API share one limit');
  });
});
