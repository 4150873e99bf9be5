import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('API keys', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('lists live keys with the current one marked', async () => {
    const alice = await createAccount(server);
    const res = await alice.api('/auth/keys');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = await res.json();
    assert.equal(body.keys.length, 1);
    assert.equal(body.keys[0].current, true);
    assert.equal(body.keys[0].prefix, `${alice.key.slice(0, 12)}…`);
  });

  it('mints a named key that authenticates, shown once', async () => {
    const bob = await createAccount(server);
    const res = await bob.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: 'laptop' }) });
    assert.equal(res.status, 201);
    const { api_key, key } = await res.json();
    assert.match(api_key, /^nds_[A-Za-z0-9_-]{43}$/);
    assert.equal(key.name, 'laptop');
    const me = await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${api_key}` } });
    assert.equal(me.status, 200);
    assert.equal((await me.json()).username, bob.user.username);
  });

  it('refuses a named key for service and test accounts', async () => {
    for (const kind of ['service', 'test'] as const) {
      const svc = await createAccount(server, { kind });
      const res = await svc.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: 'x' }) });
      assert.equal(res.status, 403);
      assert.deepEqual(Object.keys(await res.json()).sort(), ['error', 'message']);
    }
  });

  it('revokes by id and then answers key_not_found; a revoked key gets 401', async () => {
    const carol = await createAccount(server);
    const minted = await (await carol.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: 'tmp' }) })).json();
    const del = await carol.api(`/auth/keys/${minted.key.id}`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    const again = await carol.api(`/auth/keys/${minted.key.id}`, { method: 'DELETE' });
    assert.equal(again.status, 404);
    assert.equal((await again.json()).error, 'key_not_found');
    const me = await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${minted.api_key}` } });
    assert.equal(me.status, 401);
  });

  it('DELETE /auth/keys/current revokes the key that made the request', async () => {
    const dave = await createAccount(server);
    const res = await dave.api('/auth/keys/current', { method: 'DELETE' });
    assert.equal(res.status, 200);
    assert.equal((await dave.api('/users/me')).status, 401);
  });

  it('another account cannot revoke my key', async () => {
    const erin = await createAccount(server);
    const mallory = await createAccount(server);
    const keys = (await (await erin.api('/auth/keys')).json()).keys;
    const res = await mallory.api(`/auth/keys/${keys[0].id}`, { method: 'DELETE' });
    assert.equal(res.status, 404);
    assert.equal((await erin.api('/users/me')).status, 200);
  });

  it('50 simultaneous mints end with exactly 25 live keys, the rest 409 too_many_keys', async () => {
    const frank: TestAccount = await createAccount(server);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => frank.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: `k${i}` }) })),
    );
    const statuses = answers.map((r) => r.status);
    const created = statuses.filter((s) => s === 201).length;
    // The account started with one key, so 24 more fit.
    assert.equal(created, 24);
    for (const r of answers.filter((r) => r.status !== 201)) {
      assert.equal(r.status, 409);
      assert.equal((await r.json()).error, 'too_many_keys');
    }
    const live = (await (await frank.api('/auth/keys')).json()).keys;
    assert.equal(live.length, 25);
  });
});
