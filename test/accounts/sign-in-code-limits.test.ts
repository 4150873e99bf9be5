/**
 * Guessing mailed sign-in codes: past 10 wrong codes for one address, or 20 from one IP, in 15 minutes, the
 * code route answers 429 with Retry-After, the right code included, until the window passes; other
 * addresses are not held back by one address's limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CODE_FAILURES_PER_ACCOUNT, CODE_FAILURES_PER_IP } from '../../src/accounts/sign-in-limits.js';
import { LOGIN_CODE_TRIES } from '../../src/accounts/login-codes.js';
import { mailsTo, signInCodeFor } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('sign-in code guessing limits', () => {
  let server: TestServer;
  let n = 0;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const newEmail = (what: string) => `${what}-${process.pid}-${++n}@example.org`;

  function post(p: string, body: Record<string, string>): Promise<Response> {
    return fetch(`${server.url}${p}`, { method: 'POST', headers: { origin: server.url, 'content-type': 'application/json' }, body: JSON.stringify(body), redirect: 'manual' });
  }

  const signedUp = new Set<string>();

  /** Asks for a code for `email` (on first ask, with a username: a new pending account) and returns it from the outbox. */
  async function askCode(email: string): Promise<string> {
    const before = (await mailsTo(server, email)).length;
    // The username is the account's once it is made: asked again with it, the answer is 409 username_taken.
    const body: Record<string, string> = signedUp.has(email) ? { email } : { email, username: email.split('@')[0]!.slice(0, 39) };
    signedUp.add(email);
    const res = await post('/auth/code/request', body);
    assert.equal(res.status, 200);
    return signInCodeFor(server, email, before);
  }

  const wrongFor = (code: string) => (code === '000000' ? '111111' : '000000');

  /** Spends every try of a fresh code with wrong guesses: LOGIN_CODE_TRIES failures. */
  async function useUpCode(email: string): Promise<void> {
    const code = await askCode(email);
    for (let i = 1; i <= LOGIN_CODE_TRIES; i++) {
      const res = await post('/auth/code/verify', { email, code: wrongFor(code) });
      // The fifth wrong try kills the code; it answers like any other failure (401), never telling it apart.
      assert.equal(res.status, 401, `wrong try ${i}`);
    }
  }

  async function assertLimited(res: Response, maxRetryAfterS: number): Promise<void> {
    assert.equal(res.status, 429);
    assert.equal((await res.json()).error, 'rate_limited');
    const retryAfter = Number(res.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= maxRetryAfterS, `Retry-After ${res.headers.get('retry-after')}`);
  }

  it('answers the 11th wrong code for an address with 429, and the right code too until the window has passed', async () => {
    server.clock.advance(16 * 60_000);
    const email = newEmail('guessed');
    for (let failures = 0; failures < CODE_FAILURES_PER_ACCOUNT; failures += LOGIN_CODE_TRIES) await useUpCode(email);

    server.clock.advance(6 * 60_000);
    const code = await askCode(email);
    await assertLimited(await post('/auth/code/verify', { email, code: wrongFor(code) }), 9 * 60);
    // The right code is not even looked at: the guesser cannot tell it from a wrong one.
    await assertLimited(await post('/auth/code/verify', { email, code }), 9 * 60);
    await assertLimited(await post('/auth/code/verify', { email: email.toUpperCase(), code }), 9 * 60);

    // Another address from the same client signs in as before.
    const other = newEmail('bystander');
    const otherCode = await askCode(other);
    assert.equal((await post('/auth/code/verify', { email: other, code: wrongFor(otherCode) })).status, 401);
    assert.equal((await post('/auth/code/verify', { email: other, code: otherCode })).status, 200);

    server.clock.advance(8 * 60_000);
    await assertLimited(await post('/auth/code/verify', { email, code }), 60);

    // 15 minutes after the first failure the window has passed; the code (9 minutes old) still works.
    server.clock.advance(60_000 + 1000);
    const signedIn = await post('/auth/code/verify', { email, code });
    assert.equal(signedIn.status, 200);
    assert.equal((await signedIn.json()).user.email, email);
  });

  it('answers 429 to any address once one IP has sent 20 wrong codes in 15 minutes', async () => {
    server.clock.advance(16 * 60_000);
    for (let failures = 0; failures < CODE_FAILURES_PER_IP; failures += LOGIN_CODE_TRIES) await useUpCode(newEmail('spread'));
    const fresh = newEmail('fresh');
    const code = await askCode(fresh);
    await assertLimited(await post('/auth/code/verify', { email: fresh, code }), 15 * 60);
    server.clock.advance(15 * 60_000 + 1000);
    assert.equal((await post('/auth/code/verify', { email: fresh, code: await askCode(fresh) })).status, 200);
  });

  it('sends a form post past the limit back to the page with the error and Retry-After', async () => {
    server.clock.advance(16 * 60_000);
    const email = newEmail('form');
    for (let failures = 0; failures < CODE_FAILURES_PER_ACCOUNT; failures += LOGIN_CODE_TRIES) await useUpCode(email);
    const res = await fetch(`${server.url}/auth/code/verify`, {
      method: 'POST',
      headers: { origin: server.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email, code: '123456' }).toString(),
      redirect: 'manual',
    });
    assert.equal(res.status, 303);
    assert.match(res.headers.get('location') ?? '', /error=rate_limited/);
    assert.ok(Number(res.headers.get('retry-after')) > 0);
  });
});
