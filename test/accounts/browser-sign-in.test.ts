import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashPassword } from '../../src/core/secrets.js';
import { createUser, findUserByEmail } from '../../src/accounts/users.js';
import { createAccount } from '../support/accounts.js';
import { mailsTo, signInCodeFor } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('browser sign-in: mailed codes, passwords, sessions', () => {
  let server: TestServer;
  let n = 0;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const unique = (what: string) => `${what}-${process.pid}-${++n}`;

  interface PostOptions {
    origin?: string | null;
    cookie?: string;
    form?: boolean;
  }

  function post(p: string, body: Record<string, string>, options: PostOptions = {}): Promise<Response> {
    const headers = new Headers();
    const origin = options.origin === undefined ? server.url : options.origin;
    if (origin) headers.set('origin', origin);
    if (options.cookie) headers.set('cookie', options.cookie);
    headers.set('content-type', options.form ? 'application/x-www-form-urlencoded' : 'application/json');
    const payload = options.form ? new URLSearchParams(body).toString() : JSON.stringify(body);
    return fetch(`${server.url}${p}`, { method: 'POST', headers, body: payload, redirect: 'manual' });
  }

  /** The session cookie a response set, as a `Cookie` header value, and its attributes. */
  function sessionCookie(res: Response): { cookie: string; attributes: string } {
    const set = res.headers.getSetCookie().find((c) => c.startsWith('nds_session='));
    assert.ok(set, 'the answer sets nds_session');
    return { cookie: set.split(';')[0], attributes: set };
  }

  // Each test that sends mail starts a fresh rate-limit window, so the tests do not limit each other.
  const freshWindow = () => server.clock.advance(16 * 60_000);

  async function signUp(email: string, username: string): Promise<string> {
    const res = await post('/auth/code/request', { email, username });
    assert.equal(res.status, 200);
    return signInCodeFor(server, email);
  }

  it('a new address with a username gets a pending account and a code; the right code verifies it and signs in', async () => {
    freshWindow();
    const email = `${unique('new')}@example.org`;
    const username = unique('newbie');
    const code = await signUp(email, username);
    assert.equal((await findUserByEmail(server.deps.db, email))?.status, 'pending');

    const res = await post('/auth/code/verify', { email, code });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = await res.json();
    assert.equal(body.user.username, username);
    assert.equal(body.user.status, 'verified');
    const { cookie, attributes } = sessionCookie(res);
    assert.match(attributes, /HttpOnly/);
    assert.match(attributes, /SameSite=Lax/);
    assert.match(attributes, /Path=\//);
    assert.match(attributes, /Max-Age=2592000/);
    // PUBLIC_URL is http here, so the cookie cannot be Secure (the browser would drop it).
    assert.doesNotMatch(attributes, /Secure/);

    // The session works: a session-authenticated route answers.
    const keys = await fetch(`${server.url}/auth/keys`, { headers: { cookie } });
    assert.equal(keys.status, 200);
    assert.equal((await findUserByEmail(server.deps.db, email))?.status, 'verified');
  });

  it('the same code cannot be used twice', async () => {
    freshWindow();
    const email = `${unique('twice')}@example.org`;
    const code = await signUp(email, unique('twice'));
    assert.equal((await post('/auth/code/verify', { email, code })).status, 200);
    const again = await post('/auth/code/verify', { email, code });
    assert.equal(again.status, 401);
    assert.equal((await again.json()).error, 'login_code_invalid');
  });

  /** The answer to a code for an address no account uses: every failed verification must look like it. */
  async function unknownAddressAnswer(): Promise<{ status: number; body: unknown }> {
    const res = await post('/auth/code/verify', { email: `${unique('nobody')}@example.org`, code: '123456' });
    return { status: res.status, body: await res.json() };
  }

  it('the fifth wrong try kills the code, the right one included; every failure answers as for an address with no account', async () => {
    freshWindow();
    const email = `${unique('tries')}@example.org`;
    const code = await signUp(email, unique('tries'));
    const wrong = code === '000000' ? '111111' : '000000';
    const unknown = await unknownAddressAnswer();
    assert.equal(unknown.status, 401);
    assert.equal((unknown.body as { error: string }).error, 'login_code_invalid');
    for (let i = 0; i < 5; i++) {
      const res = await post('/auth/code/verify', { email, code: wrong });
      assert.deepEqual({ status: res.status, body: await res.json() }, unknown, `wrong try ${i + 1}`);
    }
    const right = await post('/auth/code/verify', { email, code });
    assert.deepEqual({ status: right.status, body: await right.json() }, unknown, 'the right code after five wrong tries');
    assert.equal((await findUserByEmail(server.deps.db, email))?.status, 'pending');
  });

  it('the right code on the fifth try still works', async () => {
    freshWindow();
    const email = `${unique('fifth')}@example.org`;
    const code = await signUp(email, unique('fifth'));
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 4; i++) assert.equal((await post('/auth/code/verify', { email, code: wrong })).status, 401);
    assert.equal((await post('/auth/code/verify', { email, code })).status, 200);
  });

  it('thirty concurrent guesses get no more than five comparisons', async () => {
    freshWindow();
    const email = `${unique('race')}@example.org`;
    const code = await signUp(email, unique('race'));
    const guesses = Array.from({ length: 30 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'));
    const answers = await Promise.all(guesses.map((g) => post('/auth/code/verify', { email, code: g })));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    // Past 10 failures the address is rate limited (429) before its code is looked at.
    const refused = bodies.filter((b) => b.error === 'login_code_invalid');
    const limited = bodies.filter((b) => b.error === 'rate_limited');
    assert.equal(refused.length + limited.length, 30);
    const row = await server.deps.db.selectFrom('login_codes').select('tries').where('user_id', '=', (await findUserByEmail(server.deps.db, email))!.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(row.tries, 5);
    assert.equal((await post('/auth/code/verify', { email, code })).status, 429);
  });

  it('a code expires after 10 minutes', async () => {
    freshWindow();
    const email = `${unique('late')}@example.org`;
    const code = await signUp(email, unique('late'));
    server.clock.advance(10 * 60_000 + 1000);
    const res = await post('/auth/code/verify', { email, code });
    assert.deepEqual({ status: res.status, body: await res.json() }, await unknownAddressAnswer());
    assert.equal((await findUserByEmail(server.deps.db, email))?.status, 'pending');
  });

  it('a newer code replaces the older one', async () => {
    freshWindow();
    const email = `${unique('newer')}@example.org`;
    const first = await signUp(email, unique('newer'));
    assert.equal((await post('/auth/code/request', { email })).status, 200);
    const second = await signInCodeFor(server, email, 1);
    if (first !== second) assert.equal((await post('/auth/code/verify', { email, code: first })).status, 401);
    assert.equal((await post('/auth/code/verify', { email, code: second })).status, 200);
  });

  it('asking without a username answers the same for a known and an unknown address (no enumeration)', async () => {
    freshWindow();
    const known = await createAccount(server, { status: 'verified' });
    const unknown = `${unique('nobody')}@example.org`;
    const a = await post('/auth/code/request', { email: known.user.email });
    const b = await post('/auth/code/request', { email: unknown });
    assert.equal(a.status, 200);
    assert.equal(b.status, b.status);
    assert.deepEqual(await a.json(), await b.json());
    assert.equal(await findUserByEmail(server.deps.db, unknown), undefined);
    // The known account got a code; the unknown address a mail that says no account uses it.
    await signInCodeFor(server, known.user.email);
    const [notice] = await mailsTo(server, unknown);
    assert.match(notice.subject, /no account/);
    assert.doesNotMatch(notice.text, /\b\d{6}\b/);
    // A wrong code for an unknown address looks like a wrong code for a known one.
    const v1 = await post('/auth/code/verify', { email: unknown, code: '123456' });
    assert.equal(v1.status, 401);
    assert.equal((await v1.json()).error, 'login_code_invalid');
  });

  it('an address of an existing account, with a username, signs that account in without creating another', async () => {
    freshWindow();
    const known = await createAccount(server, { status: 'verified' });
    const res = await post('/auth/code/request', { email: known.user.email.toUpperCase(), username: unique('other') });
    assert.equal(res.status, 200);
    const code = await signInCodeFor(server, known.user.email);
    const verified = await post('/auth/code/verify', { email: known.user.email, code });
    assert.equal((await verified.json()).user.username, known.user.username);
  });

  it('a username of another account is refused with 409 username_taken', async () => {
    freshWindow();
    const known = await createAccount(server, { status: 'verified' });
    const res = await post('/auth/code/request', { email: `${unique('x')}@example.org`, username: known.user.username });
    assert.equal(res.status, 409);
    assert.equal((await res.json()).error, 'username_taken');
  });

  it('revoked, service and test accounts are sent nothing, and the answer is the same', async () => {
    freshWindow();
    for (const options of [{ status: 'revoked' as const }, { kind: 'service' as const }, { kind: 'test' as const }]) {
      const account = await createAccount(server, options);
      const res = await post('/auth/code/request', { email: account.user.email });
      assert.equal(res.status, 200);
      assert.equal((await mailsTo(server, account.user.email)).length, 0);
    }
  });

  it('bad bodies are refused with 400 validation_failed and a detail', async () => {
    for (const body of [{ email: 'not-an-address' }, { email: 'a@example.org', username: '-bad' }, {}]) {
      const res = await post('/auth/code/request', body as Record<string, string>);
      assert.equal(res.status, 400);
      const answer = await res.json();
      assert.equal(answer.error, 'validation_failed');
      assert.ok(answer.details.length > 0);
    }
    const notJson = await fetch(`${server.url}/auth/code/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' });
    assert.equal(notJson.status, 400);
  });

  it('more than five codes for one address in 15 minutes answer 429 with Retry-After', async () => {
    freshWindow();
    const email = `${unique('flood')}@example.org`;
    for (let i = 0; i < 5; i++) assert.equal((await post('/auth/code/request', { email })).status, 200);
    const res = await post('/auth/code/request', { email });
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
    assert.equal((await mailsTo(server, email)).length, 5);
  });

  describe('passwords', () => {
    let passwordUser: { username: string; email: string };
    before(async () => {
      const username = unique('pw');
      passwordUser = { username, email: `${username}@example.org` };
      await createUser(server.deps.db, { ...passwordUser, status: 'verified', passwordHash: await hashPassword('correct horse') }, server.deps.clock.now());
    });

    it('signs in by username or by email address', async () => {
      for (const login of [passwordUser.username, passwordUser.email.toUpperCase()]) {
        const res = await post('/auth/password/login', { login, password: 'correct horse' });
        assert.equal(res.status, 200);
        assert.equal((await res.json()).user.username, passwordUser.username);
        const { cookie } = sessionCookie(res);
        assert.equal((await fetch(`${server.url}/auth/keys`, { headers: { cookie } })).status, 200);
      }
    });

    it('a wrong password and an unknown name get the same 401', async () => {
      const wrong = await post('/auth/password/login', { login: passwordUser.username, password: 'wrong horse' });
      const nobody = await post('/auth/password/login', { login: unique('ghost'), password: 'correct horse' });
      assert.equal(wrong.status, 401);
      assert.equal(nobody.status, 401);
      assert.deepEqual(await wrong.json(), await nobody.json());
      assert.equal(wrong.headers.getSetCookie().length, 0);
    });

    it('a pending account gets a session (to finish verification) but a revoked one is refused', async () => {
      const pending = unique('pend');
      await createUser(server.deps.db, { username: pending, email: `${pending}@example.org`, status: 'pending', passwordHash: await hashPassword('pending pass') }, server.deps.clock.now());
      const res = await post('/auth/password/login', { login: pending, password: 'pending pass' });
      assert.equal(res.status, 200);
      assert.equal((await res.json()).user.status, 'pending');
      // The session is refused everywhere but the pages that finish verification.
      const keys = await fetch(`${server.url}/auth/keys`, { headers: { cookie: sessionCookie(res).cookie } });
      assert.equal(keys.status, 403);
      assert.equal((await keys.json()).error, 'account_pending');

      const revoked = unique('rev');
      await createUser(server.deps.db, { username: revoked, email: `${revoked}@example.org`, status: 'revoked', passwordHash: await hashPassword('revoked pass') }, server.deps.clock.now());
      const refused = await post('/auth/password/login', { login: revoked, password: 'revoked pass' });
      assert.equal(refused.status, 403);
      assert.equal((await refused.json()).error, 'account_revoked');
    });

    it('ten wrong passwords for one name lock that name for 15 minutes', async () => {
      const name = unique('locked');
      await createUser(server.deps.db, { username: name, email: `${name}@example.org`, status: 'verified', passwordHash: await hashPassword('the right one') }, server.deps.clock.now());
      for (let i = 0; i < 10; i++) assert.equal((await post('/auth/password/login', { login: name, password: `wrong ${i}` })).status, 401);
      const locked = await post('/auth/password/login', { login: name, password: 'the right one' });
      assert.equal(locked.status, 429);
      server.clock.advance(15 * 60_000 + 1000);
      assert.equal((await post('/auth/password/login', { login: name, password: 'the right one' })).status, 200);
    });
  });

  it('logout ends the session and clears the cookie', async () => {
    freshWindow();
    const email = `${unique('bye')}@example.org`;
    const code = await signUp(email, unique('bye'));
    const { cookie } = sessionCookie(await post('/auth/code/verify', { email, code }));
    const res = await post('/auth/logout', {}, { cookie });
    assert.equal(res.status, 200);
    assert.match(res.headers.getSetCookie().join('\n'), /nds_session=;.*Max-Age=0/);
    const after = await fetch(`${server.url}/auth/keys`, { headers: { cookie } });
    assert.equal(after.status, 401);
  });

  it('a foreign Origin is refused with 403 on every sign-in post, and a logout from one leaves the session alone', async () => {
    freshWindow();
    const evil = 'https://evil.example';
    const email = `${unique('origin')}@example.org`;
    for (const [p, body] of [
      ['/auth/code/request', { email, username: unique('origin') }],
      ['/auth/code/verify', { email, code: '123456' }],
      ['/auth/password/login', { login: 'someone', password: 'whatever1' }],
    ] as const) {
      for (const form of [false, true]) {
        const res = await post(p, body, { origin: evil, form });
        assert.equal(res.status, 403, `${p} form=${form}`);
        assert.equal((await res.json()).error, 'foreign_origin');
      }
    }
    assert.equal(await findUserByEmail(server.deps.db, email), undefined);

    const code = await signUp(email, unique('origin'));
    const { cookie } = sessionCookie(await post('/auth/code/verify', { email, code }));
    assert.equal((await post('/auth/logout', {}, { cookie, origin: evil })).status, 403);
    assert.equal((await post('/auth/logout', {}, { cookie, origin: null })).status, 403);
    assert.equal((await fetch(`${server.url}/auth/keys`, { headers: { cookie } })).status, 200);
  });

  describe('form posts from the pages (no JavaScript)', () => {
    it('asking for a code redirects to the code step; a wrong code back to it with the error; the right one to next', async () => {
      freshWindow();
      const email = `${unique('form')}@example.org`;
      const username = unique('form');
      const asked = await post('/auth/code/request', { email, username, from: 'signup', next: '/device?code=BCDF-GHJK' }, { form: true });
      assert.equal(asked.status, 303);
      const to = new URL(asked.headers.get('location')!, server.url);
      assert.equal(to.pathname, '/login');
      assert.equal(to.searchParams.get('step'), 'code');
      assert.equal(to.searchParams.get('email'), email);
      assert.equal(to.searchParams.get('next'), '/device?code=BCDF-GHJK');

      const code = await signInCodeFor(server, email);
      const wrong = await post('/auth/code/verify', { email, code: code === '000000' ? '111111' : '000000', next: '/device?code=BCDF-GHJK' }, { form: true });
      assert.equal(wrong.status, 303);
      const back = new URL(wrong.headers.get('location')!, server.url);
      assert.equal(back.searchParams.get('error'), 'login_code_invalid');
      assert.equal(back.searchParams.get('step'), 'code');
      assert.equal(wrong.headers.getSetCookie().length, 0);

      const right = await post('/auth/code/verify', { email, code, next: '/device?code=BCDF-GHJK' }, { form: true });
      assert.equal(right.status, 303);
      assert.equal(right.headers.get('location'), '/device?code=BCDF-GHJK');
      sessionCookie(right);
    });

    it('a next that leaves the site is replaced by /account', async () => {
      const name = unique('nextpw');
      await createUser(server.deps.db, { username: name, email: `${name}@example.org`, status: 'verified', passwordHash: await hashPassword('next password') }, server.deps.clock.now());
      for (const next of ['//evil.example/x', 'https://evil.example', '/\\evil.example', 'javascript:alert(1)']) {
        const res = await post('/auth/password/login', { login: name, password: 'next password', next }, { form: true });
        assert.equal(res.status, 303);
        assert.equal(res.headers.get('location'), '/account');
      }
    });

    it('a taken username sends the signup form back with the error and what was typed', async () => {
      freshWindow();
      const known = await createAccount(server, { status: 'verified' });
      const email = `${unique('taken')}@example.org`;
      const res = await post('/auth/code/request', { email, username: known.user.username, from: 'signup' }, { form: true });
      assert.equal(res.status, 303);
      const back = new URL(res.headers.get('location')!, server.url);
      assert.equal(back.pathname, '/signup');
      assert.equal(back.searchParams.get('error'), 'username_taken');
      assert.equal(back.searchParams.get('email'), email);
    });

    it('a name taken between the code and its verification sends the code form back to the sign-up, to choose another', async () => {
      freshWindow();
      const email = `${unique('late')}@example.org`;
      assert.equal((await post('/auth/code/request', { email, username: unique('first'), from: 'signup' }, { form: true })).status, 303);
      const wanted = unique('wanted');
      const before = (await mailsTo(server, email)).length;
      assert.equal((await post('/auth/code/request', { email, username: wanted, from: 'signup' }, { form: true })).status, 303);
      const code = await signInCodeFor(server, email, before);
      await createAccount(server, { username: wanted, status: 'verified' });
      const res = await post('/auth/code/verify', { email, code }, { form: true });
      assert.equal(res.status, 303);
      const back = new URL(res.headers.get('location')!, server.url);
      assert.equal(back.pathname, '/signup');
      assert.equal(back.searchParams.get('error'), 'username_taken');
      assert.equal(back.searchParams.get('email'), email);
      assert.equal(res.headers.getSetCookie().length, 0);
    });

    it('logout by form redirects to the sign-in page', async () => {
      const res = await post('/auth/logout', {}, { form: true });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/login?signed_out=1');
    });
  });
});
