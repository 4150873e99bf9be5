import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { KeyCache } from '../../src/accounts/key-cache.js';
import { sha256Hex } from '../../src/core/secrets.js';
import { createAccount } from '../support/accounts.js';
import { startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';

describe('bearer-key cache', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { API_KEY_CACHE_MS: '60000' } });
  });
  after(() => server.close());

  async function usedOnce() {
    const account = await createAccount(server);
    assert.equal((await account.api('/users/me')).status, 200);
    // The look-up is now cached: the next request must not need the database to authenticate.
    assert.ok(server.deps.keyCache.get(sha256Hex(account.key)), 'the look-up was cached');
    return account;
  }

  it('keeps its look-ups through commits that write no account or key (a worker polls in transactions)', async () => {
    const account = await usedOnce();
    await server.deps.db.transaction().execute(async (trx) => {
      await trx.selectFrom('conversion_jobs').select('id').limit(1).execute();
      await trx.updateTable('datasets').set({ updated_at: new Date() }).where('id', '=', 'nd999999').execute();
    });
    assert.ok(server.deps.keyCache.get(sha256Hex(account.key)), 'still cached');
    await server.deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ updated_at: new Date() }).where('id', '=', account.user.id).execute();
    });
    assert.equal(server.deps.keyCache.get(sha256Hex(account.key)), undefined, 'emptied by a commit that wrote users');
  });

  it('answers a revoked key with 401 at once, although its look-up was cached for a minute', async () => {
    const account = await usedOnce();
    assert.equal((await account.api('/auth/keys/current', { method: 'DELETE' })).status, 200);
    assert.equal((await account.api('/users/me')).status, 401);
  });

  it('sees an account revoked by a direct database write at once', async () => {
    const account = await usedOnce();
    await server.deps.db.updateTable('users').set({ status: 'revoked' }).where('id', '=', account.user.id).execute();
    assert.equal((await account.api('/users/me')).status, 401);
  });

  it('sees a raw SQL write to api_keys at once', async () => {
    const account = await usedOnce();
    await sql`update api_keys set revoked_at = now() where user_id = ${account.user.id}`.execute(server.deps.db);
    assert.equal((await account.api('/users/me')).status, 401);
  });

  it(
    'answers 401 at once after a transaction that revoked the key commits, although a request in between was served and cached',
    // The embedded database lends its one connection to the transaction: no request can look the key up meanwhile.
    { skip: !usingPostgres && 'needs a second connection (PostgreSQL pass)' },
    async () => {
      const account = await usedOnce();
      await server.deps.db.transaction().execute(async (trx) => {
        await trx.updateTable('api_keys').set({ revoked_at: new Date() }).where('user_id', '=', account.user.id).execute();
        // Another connection still sees the key live (the revocation is not committed): served, and cached again.
        assert.equal((await account.api('/users/me')).status, 200);
        assert.ok(server.deps.keyCache.get(sha256Hex(account.key)), 'the look-up during the transaction was cached');
      });
      assert.equal((await account.api('/users/me')).status, 401);
    },
  );

  it('serves fresh user fields after an update (role shown by /users/me)', async () => {
    const account = await usedOnce();
    await server.deps.db.updateTable('users').set({ role: 'admin' }).where('id', '=', account.user.id).execute();
    assert.equal(((await (await account.api('/users/me')).json()) as { role: string }).role, 'admin');
  });

  it('keeps a look-up that overlapped a write out of the cache', () => {
    const cache = new KeyCache(60_000);
    const generation = cache.generation();
    cache.clear();
    cache.set('h', {} as never, generation);
    assert.equal(cache.get('h'), undefined);
    cache.set('h', {} as never, cache.generation());
    assert.ok(cache.get('h'));
  });

  it('stores nothing when its lifetime is 0', () => {
    const cache = new KeyCache(0);
    cache.set('h', {} as never, cache.generation());
    assert.equal(cache.get('h'), undefined);
  });
});
