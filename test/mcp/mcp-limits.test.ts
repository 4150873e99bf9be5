import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { MCP_REQUESTS_PER_MINUTE } from '../../src/mcp/mcp-limits.js';

describe('MCP requests count against a per-caller limit, as requests of the HTTP API', () => {
  let server: TestServer;
  let account: TestAccount;

  before(async () => {
    server = await startTestServer();
    account = await createAccount(server);
  });
  after(() => server.close());

  /** One POST of `n` JSON-RPC pings (a batch). */
  const pings = (n: number, key?: string) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'ping' }))),
    });

  it('answers 429 with Retry-After past the limit, counting each request of a batch, by key or by address', async () => {
    for (let sent = 0; sent < MCP_REQUESTS_PER_MINUTE; sent += 100) {
      const res = await pings(100);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(((await res.json()) as unknown[]).length, 100);
    }
    const refused = await pings(1);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After');
    // Notifications cost nothing; a caller with a key has a budget of its own.
    const notification = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    assert.equal(notification.status, 202);
    assert.equal((await pings(1, account.key)).status, 200);
    // A minute later the window is new.
    server.clock.advance(61_000);
    assert.equal((await pings(1)).status, 200);
  });
});
