import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createAccount, createBrowserSession } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('secrets at rest and in logs', () => {
  let server: TestServer;
  let logs = '';
  before(async () => {
    const sink = new PassThrough();
    sink.on('data', (chunk) => (logs += chunk.toString()));
    server = await startTestServer({ env: { LOG_LEVEL: 'trace' }, logDestination: sink });
  });
  after(() => server.close());

  it('no API key, session id or device code is found in plaintext anywhere in the database, nor in the logs', async () => {
    const alice = await createAccount(server, { status: 'verified' });
    const minted = await (await alice.api('/auth/keys', { method: 'POST', body: JSON.stringify({ name: 'named' }) })).json();
    const browser = await createBrowserSession(server, alice.user);
    const start = await (await fetch(`${server.url}/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json();
    await browser.fetch('/auth/device/confirm', { method: 'POST', body: JSON.stringify({ code: start.user_code }) });
    const grant = await (await fetch(`${server.url}/auth/device/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ device_code: start.device_code }) })).json();
    assert.match(grant.api_key, /^nds_/);
    // An authenticated request and a refused one, so both paths have logged.
    await alice.api('/users/me');
    await fetch(`${server.url}/users/me`, { headers: { authorization: 'Bearer nds_wrong' } });

    const secrets = {
      'test key': alice.key,
      'named key': minted.api_key,
      'device key': grant.api_key,
      'session id': browser.cookie.split('=')[1],
      'device code': start.device_code,
      'user code': start.user_code.replace('-', ''),
    };
    const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(server.deps.db);
    let dump = '';
    for (const { table_name } of tables.rows) {
      const rows = await sql<{ row: string }>`select t::text as row from ${sql.table(table_name)} t`.execute(server.deps.db);
      dump += rows.rows.map((r) => r.row).join('\n');
    }
    assert.ok(dump.length > 1000, 'the dump holds the rows');
    for (const [what, secret] of Object.entries(secrets)) {
      assert.ok(!dump.includes(secret), `${what} is stored in plaintext`);
      assert.ok(!logs.includes(secret), `${what} appears in the logs`);
    }
    assert.ok(logs.includes('/users/me'), 'requests were logged');
  });
});
