/**
 * Anonymous catalogue and search requests are counted by the shared rate limiter (decision 0023): each walks
 * indexes of the largest tables, and the routes answer anyone. A signed-in caller is not counted; `limit`
 * stays at most 1,000 a page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';

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
    // One dataset's recordings count too, refused before the dataset is looked up (known or not, the same answer).
    assert.equal((await apiFetch(server, '/datasets/nd000001/recordings')).status, 429);
    assert.equal((await apiFetch(server, '/datasets/nd999999/recordings')).status, 429);
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

  it('keep a search page at 100 datasets and its offset at 10,000', async () => {
    assert.equal((await apiFetch(server, '/datasets/search?limit=101', account.key)).status, 400);
    assert.equal((await apiFetch(server, '/datasets/search?offset=10001', account.key)).status, 400);
    assert.equal((await apiFetch(server, '/datasets/search?limit=100&offset=10000', account.key)).status, 200);
  });
});

// A statement the database cancels (DATABASE_STATEMENT_TIMEOUT_MS) is answered 503 with Retry-After, not 500:
// the caller may try again, and a slow query cannot hold a connection for longer than the timeout.
describe('a catalogue or search query past the statement timeout', { skip: usingPostgres ? false : 'needs PostgreSQL (NDS_TEST_DB=postgres): PGlite has no statement timeout' }, () => {
  let server: TestServer;
  let locker: pg.Client;

  before(async () => {
    server = await startTestServer({ env: { DATABASE_STATEMENT_TIMEOUT_MS: '300' } });
    locker = new pg.Client({ connectionString: server.config.databaseUrl });
    await locker.connect();
  });
  after(async () => {
    await locker.end();
    await server.close();
  });

  it('answers 503 with Retry-After, and answers again once the database does', async () => {
    // Another session holds the tables: each query waits for its lock until the timeout cancels it.
    await locker.query('begin');
    await locker.query('lock table recordings, datasets in access exclusive mode');
    try {
      for (const path of ['/recordings', '/recordings?task=rest&q=sub-01_task', '/datasets/search?q=eeg', '/datasets/search?subject=01']) {
        const started = Date.now();
        const res = await apiFetch(server, path);
        assert.equal(res.status, 503, path);
        assert.equal(((await res.json()) as { error: string }).error, 'service_unavailable');
        assert.ok(Number(res.headers.get('retry-after')) > 0, `Retry-After on ${path}`);
        assert.ok(Date.now() - started < 5000, `${path} was cancelled, not waited for`);
      }
    } finally {
      await locker.query('rollback');
    }
    assert.equal((await apiFetch(server, '/recordings?task=rest&q=sub-01_task')).status, 200);
    assert.equal((await apiFetch(server, '/datasets/search?q=eeg')).status, 200);
  });
});
