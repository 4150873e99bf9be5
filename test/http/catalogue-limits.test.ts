/**
 * Anonymous catalogue and search requests are counted by the shared rate limiter (decision 0023): each walks
 * indexes of the largest tables, and the routes answer anyone. A signed-in caller is not counted; `limit`
 * stays at most 1,000 a page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('anonymous catalogue and search requests', () => {
  let server: TestServer;
  let account: TestAccount;

  before(async () => {
    server = await startTestServer({ env: { ANONYMOUS_CATALOGUE_PER_MINUTE: '3' } });
    account = await createAccount(server);
  });
  after(() => server.close());

  it('answer 429 with Retry-After past the limit an address has, across the catalogue and the search, until the window ends', async () => {
    assert.equal((await apiFetch(server, '/recordings?limit=10')).status, 200);
    assert.equal((await apiFetch(server, '/datasets/search?q=eeg')).status, 200);
    assert.equal((await apiFetch(server, '/recordings?task=rest')).status, 200);
    const refused = await apiFetch(server, '/datasets/search?q=emg');
    assert.equal(refused.status, 429);
    assert.equal(((await refused.json()) as { error: string }).error, 'rate_limited');
    assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    assert.equal((await apiFetch(server, '/recordings')).status, 429);
    // A caller with a key is not counted.
    for (let i = 0; i < 5; i++) assert.equal((await apiFetch(server, '/recordings', account.key)).status, 200);
    server.clock.advance(61_000);
    assert.equal((await apiFetch(server, '/recordings')).status, 200);
  });

  it('keep a page at 1,000 recordings at most', async () => {
    const res = await apiFetch(server, '/recordings?limit=1001', account.key);
    assert.equal(res.status, 400);
    assert.equal((await apiFetch(server, '/recordings?limit=1000', account.key)).status, 200);
  });
});
