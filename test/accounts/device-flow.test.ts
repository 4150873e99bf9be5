import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, createBrowserSession } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('device sign-in (RFC 8628)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  const post = (p: string, body: unknown) =>
    fetch(`${server.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  async function start(machine = 'lab-pc') {
    const res = await post('/auth/device/start', { machine_name: machine });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    return res.json();
  }

  /** Polls after moving the clock past the interval, so slow_down does not interfere. */
  async function poll(deviceCode: string) {
    server.clock.advance(5_001);
    const res = await post('/auth/device/token', { device_code: deviceCode });
    assert.equal(res.headers.get('cache-control'), 'no-store');
    return { status: res.status, body: await res.json() };
  }

  it('start answers the code pair of CONTRACT §2', async () => {
    const s = await start();
    assert.match(s.user_code, /^[BCDFGHJKLMNPQRSTVWXZ2-9]{4}-[BCDFGHJKLMNPQRSTVWXZ2-9]{4}$/);
    assert.match(s.device_code, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(s.verification_uri, `${server.url}/device`);
    assert.equal(s.verification_uri_complete, `${server.url}/device?code=${s.user_code}`);
    assert.equal(s.expires_in, 600);
    assert.equal(s.interval, 5);
  });

  it('pending answers authorization_pending, then slow_down when polled too fast', async () => {
    const s = await start();
    const first = await poll(s.device_code);
    assert.equal(first.status, 400);
    assert.deepEqual(first.body, { error: 'authorization_pending', message: first.body.message });
    const tooSoon = await post('/auth/device/token', { device_code: s.device_code });
    assert.equal(tooSoon.status, 400);
    const body = await tooSoon.json();
    assert.equal(body.error, 'slow_down');
    assert.equal(body.reason, undefined);
    // A poll after the interval is accepted again.
    assert.equal((await poll(s.device_code)).body.error, 'authorization_pending');
  });

  it('unknown code: invalid_grant / device_code_unknown', async () => {
    const r = await poll('nope-not-a-code');
    assert.equal(r.status, 400);
    assert.deepEqual(Object.keys(r.body).sort(), ['error', 'message', 'reason']);
    assert.equal(r.body.error, 'invalid_grant');
    assert.equal(r.body.reason, 'device_code_unknown');
  });

  it('confirm then collect mints exactly one key; a second collection is device_code_used', async () => {
    const alice = await createAccount(server, { status: 'verified' });
    const browser = await createBrowserSession(server, alice.user);
    const s = await start('alice-laptop');
    const pending = await poll(s.device_code);
    assert.equal(pending.body.error, 'authorization_pending');

    const look = await browser.fetch(`/auth/device/lookup?code=${s.user_code.toLowerCase()}`);
    assert.equal(look.status, 200);
    const seen = await look.json();
    assert.equal(seen.machine_name, 'alice-laptop');
    assert.equal(seen.account.username, alice.user.username);
    assert.match(seen.account.email_masked, /^u\*\*\*@example\.org$/);
    assert.equal(seen.refusal, null);

    const keysBefore = (await (await alice.api('/auth/keys')).json()).keys.length;
    const conf = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
    assert.equal(conf.status, 200);
    assert.deepEqual(await conf.json(), { ok: true });
    // Confirm mints nothing.
    assert.equal((await (await alice.api('/auth/keys')).json()).keys.length, keysBefore);

    const got = await poll(s.device_code);
    assert.equal(got.status, 200);
    assert.match(got.body.api_key, /^nds_/);
    assert.deepEqual(got.body.user, { username: alice.user.username, role: 'member', kind: 'person', status: 'verified' });
    const me = await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${got.body.api_key}` } });
    assert.equal(me.status, 200);

    const again = await poll(s.device_code);
    assert.equal(again.body.error, 'invalid_grant');
    assert.equal(again.body.reason, 'device_code_used');
    // Browser side: the code is used now.
    const late = await browser.fetch(`/auth/device/lookup?code=${s.user_code}`);
    assert.equal(late.status, 409);
    assert.deepEqual(await late.json(), { error: 'device_code_used', message: 'That code was already used.' });
  });

  it('deny: access_denied / device_code_denied, and 409 device_code_denied in the browser', async () => {
    const bob = await createAccount(server);
    const browser = await createBrowserSession(server, bob.user);
    const s = await start();
    const res = await browser.fetch('/auth/device/deny', { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
    assert.equal(res.status, 200);
    const r = await poll(s.device_code);
    assert.equal(r.body.error, 'access_denied');
    assert.equal(r.body.reason, 'device_code_denied');
    const conf = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
    assert.equal(conf.status, 409);
    assert.equal((await conf.json()).error, 'device_code_denied');
  });

  it('expiry after 10 minutes: expired_token / device_code_expired, and 410 in the browser', async () => {
    const carol = await createAccount(server);
    const browser = await createBrowserSession(server, carol.user);
    const s = await start();
    server.clock.advance(600_000);
    const r = await poll(s.device_code);
    assert.equal(r.body.error, 'expired_token');
    assert.equal(r.body.reason, 'device_code_expired');
    for (const p of ['/auth/device/confirm', '/auth/device/deny']) {
      const res = await browser.fetch(p, { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
      assert.equal(res.status, 410);
      assert.equal((await res.json()).error, 'device_code_expired');
    }
    const look = await browser.fetch(`/auth/device/lookup?code=${s.user_code}`);
    assert.equal(look.status, 410);
  });

  it('a confirmed code not collected within 10 minutes expires', async () => {
    const dan = await createAccount(server);
    const browser = await createBrowserSession(server, dan.user);
    const s = await start();
    assert.equal((await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) })).status, 200);
    server.clock.advance(600_000);
    assert.equal((await poll(s.device_code)).body.reason, 'device_code_expired');
  });

  it('lookup/confirm/deny of an unknown code answer 404 device_code_unknown', async () => {
    const erin = await createAccount(server);
    const browser = await createBrowserSession(server, erin.user);
    const look = await browser.fetch('/auth/device/lookup?code=BBBB-BBBB');
    assert.equal(look.status, 404);
    assert.deepEqual(Object.keys(await look.json()).sort(), ['error', 'message']);
    const conf = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: 'BBBB-BBBB' }) });
    assert.equal(conf.status, 404);
    assert.equal((await conf.json()).error, 'device_code_unknown');
  });

  it('account refused at collection: each gate gives access_denied with its reason', async () => {
    const cases: Array<{ reason: string; mutate: (id: number) => Promise<unknown> }> = [
      { reason: 'account_revoked', mutate: (id) => server.deps.db.updateTable('users').set({ status: 'revoked' }).where('id', '=', id).execute() },
      { reason: 'identity_conflict', mutate: (id) => server.deps.db.updateTable('users').set({ identity_conflict: true }).where('id', '=', id).execute() },
      { reason: 'account_pending', mutate: (id) => server.deps.db.updateTable('users').set({ status: 'pending' }).where('id', '=', id).execute() },
      { reason: 'service_account', mutate: (id) => server.deps.db.updateTable('users').set({ kind: 'service' }).where('id', '=', id).execute() },
    ];
    for (const { reason, mutate } of cases) {
      const acct = await createAccount(server);
      const browser = await createBrowserSession(server, acct.user);
      const s = await start();
      assert.equal((await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) })).status, 200);
      // The account changes between confirm and collection: the gate is re-checked at collection.
      await mutate(acct.user.id);
      const r = await poll(s.device_code);
      assert.equal(r.status, 400, reason);
      assert.deepEqual({ error: r.body.error, reason: r.body.reason }, { error: 'access_denied', reason }, reason);
      assert.equal(typeof r.body.message, 'string');
    }
  });

  it('too_many_keys at collection: access_denied / too_many_keys', async () => {
    const fay = await createAccount(server);
    const browser = await createBrowserSession(server, fay.user);
    for (let i = 0; i < 24; i++) {
      assert.equal((await fay.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: `k${i}` }) })).status, 201);
    }
    const s = await start();
    assert.equal((await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) })).status, 200);
    const r = await poll(s.device_code);
    assert.deepEqual({ error: r.body.error, reason: r.body.reason }, { error: 'access_denied', reason: 'too_many_keys' });
  });

  it('confirm is refused for pending, revoked, conflicting and service accounts with 403 and its code', async () => {
    const cases = [
      { status: 'pending' as const, code: 'account_pending' },
      { status: 'approved' as const, kind: 'service' as const, code: 'service_account' },
      { status: 'approved' as const, kind: 'test' as const, code: 'service_account' },
    ];
    for (const c of cases) {
      const acct = await createAccount(server, { status: c.status, kind: c.kind });
      const browser = await createBrowserSession(server, acct.user);
      const s = await start();
      const look = await browser.fetch(`/auth/device/lookup?code=${s.user_code}`);
      assert.equal(look.status, 200);
      assert.equal((await look.json()).refusal.code, c.code);
      const res = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
      assert.equal(res.status, 403, c.code);
      assert.deepEqual(Object.keys(await res.clone().json()).sort(), ['error', 'message']);
      assert.equal((await res.json()).error, c.code);
    }
    const revoked = await createAccount(server);
    const browser = await createBrowserSession(server, revoked.user);
    await server.deps.db.updateTable('users').set({ status: 'revoked' }).where('id', '=', revoked.user.id).execute();
    const s = await start();
    const res = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).error, 'account_revoked');
  });

  it('confirm with a foreign Origin, or without a session, is refused', async () => {
    const gus = await createAccount(server);
    const browser = await createBrowserSession(server, gus.user);
    const s = await start();
    const foreign = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) }, 'http://evil.example');
    assert.equal(foreign.status, 403);
    assert.equal((await foreign.json()).error, 'foreign_origin');
    const noSession = await post('/auth/device/confirm', { code: s.user_code });
    assert.equal(noSession.status, 401);
    // A bearer key is not a browser session.
    const bearer = await gus.api('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
    assert.equal(bearer.status, 401);
    assert.equal((await poll(s.device_code)).body.error, 'authorization_pending');
  });

  it('accepts the RFC 8628 form body and refuses a wrong grant_type', async () => {
    const s = await start();
    server.clock.advance(5_001);
    const form = await fetch(`${server.url}/auth/device/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: s.device_code }),
    });
    assert.equal(form.status, 400);
    assert.equal((await form.json()).error, 'authorization_pending');
    const wrong = await fetch(`${server.url}/auth/device/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', device_code: s.device_code }),
    });
    assert.equal(wrong.status, 400);
    assert.equal((await wrong.json()).error, 'validation_failed');
    const missing = await post('/auth/device/token', {});
    assert.equal(missing.status, 400);
    assert.equal((await missing.json()).error, 'validation_failed');
  });

  it('20 simultaneous collections of one confirmed code give exactly one key', async () => {
    const hal = await createAccount(server);
    const browser = await createBrowserSession(server, hal.user);
    const s = await start();
    assert.equal((await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) })).status, 200);
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/auth/device/token', { device_code: s.device_code })));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    const granted = bodies.filter((b, i) => answers[i].status === 200);
    assert.equal(granted.length, 1);
    for (const [i, b] of bodies.entries()) {
      if (answers[i].status === 200) continue;
      assert.equal(answers[i].status, 400);
      assert.deepEqual({ error: b.error, reason: b.reason }, { error: 'invalid_grant', reason: 'device_code_used' });
    }
    const device = (await (await hal.api('/auth/keys')).json()).keys.filter((k: { name: string }) => k.name.startsWith('device:'));
    assert.equal(device.length, 1);
  });

  it('guessing codes is cut off per session with 429 and Retry-After', async () => {
    const ivy = await createAccount(server);
    const browser = await createBrowserSession(server, ivy.user);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: `BBBB-BB${'BCDFGHJKLMNP'[i]}${'BCDFGHJKLMNP'[i]}` }) });
      statuses.push(res.status);
      if (res.status === 429) assert.ok(Number(res.headers.get('retry-after')) > 0);
    }
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(404));
    assert.deepEqual(statuses.slice(10), [429, 429]);
    // Even a real code is refused while the session is cut off.
    const s = await start();
    const real = await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: s.user_code }) });
    assert.equal(real.status, 429);
  });

  it('stores device codes and user codes only as hashes', async () => {
    const s = await start();
    const rows = await server.deps.db.selectFrom('device_codes').selectAll().execute();
    const dump = JSON.stringify(rows);
    assert.ok(!dump.includes(s.device_code));
    assert.ok(!dump.includes(s.user_code.replace('-', '')));
  });
});
