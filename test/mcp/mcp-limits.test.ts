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

// Decision 0023: an address without a key has a budget of catalogue and search walks a minute, whichever way it
// asks. The tools and resources that walk the catalogue through POST /mcp spend the budget GET /recordings
// spends, under the same key, so an operator's ANONYMOUS_CATALOGUE_PER_MINUTE holds for MCP callers too.
describe('anonymous MCP catalogue calls count against the anonymous catalogue budget of the HTTP routes', () => {
  const BUDGET = 3;
  let server: TestServer;
  let account: TestAccount;

  before(async () => {
    server = await startTestServer({ env: { ANONYMOUS_CATALOGUE_PER_MINUTE: String(BUDGET) } });
    account = await createAccount(server);
  });
  after(() => server.close());

  type RpcAnswer = { result?: { isError?: boolean; content: Array<{ text: string }>; structuredContent?: unknown }; error?: { code: number; message: string; data?: Record<string, unknown> } };

  const rpc = async (method: string, params: Record<string, unknown>, key?: string): Promise<RpcAnswer> => {
    const res = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as RpcAnswer;
  };
  /** A tool call's error body, or `answered`. */
  const tool = async (name: string, args: Record<string, unknown>, key?: string): Promise<Record<string, unknown> | 'answered'> => {
    const { result } = await rpc('tools/call', { name, arguments: args }, key);
    return result?.isError ? (JSON.parse(result.content[0]!.text) as Record<string, unknown>) : 'answered';
  };

  it('refuses a tool past the budget with rate_limited saying the limit and when to retry, and the HTTP routes too', async () => {
    assert.equal((await fetch(`${server.url}/recordings?q=anything`)).status, 200);
    assert.equal(await tool('list_recordings', { q: 'anything' }), 'answered');
    // Counted before the dataset is looked up: an unknown id spends as much as a known one.
    assert.equal(((await tool('get_dataset', { dataset_id: 'nd999999' })) as { error: string }).error, 'dataset_not_found');
    for (const [name, args] of [['search_datasets', { q: 'eeg' }], ['list_recordings', {}], ['get_dataset', { dataset_id: 'nd999999' }]] as const) {
      const refused = await tool(name, args);
      assert.notEqual(refused, 'answered', name);
      const body = refused as { error: string; message: string; limit_per_minute: number; retry_after_s: number };
      assert.equal(body.error, 'rate_limited', name);
      assert.equal(body.limit_per_minute, BUDGET);
      assert.ok(body.retry_after_s > 0 && body.retry_after_s <= 60, String(body.retry_after_s));
      assert.match(body.message, new RegExp(`${BUDGET} catalogue and search requests .* try again in ${body.retry_after_s} seconds?`));
    }
    // The MCP calls spent the HTTP routes' budget.
    assert.equal((await fetch(`${server.url}/recordings`)).status, 429);
    // A minute later the window is new.
    server.clock.advance(61_000);
    assert.equal(await tool('search_datasets', { q: 'eeg' }), 'answered');
  });

  it('refuses resources/list and reading a dataset resource past the budget with a server error carrying the body', async () => {
    server.clock.advance(61_000);
    for (let i = 0; i < BUDGET; i++) assert.equal((await fetch(`${server.url}/datasets/search?q=eeg`)).status, 200);
    for (const [method, params] of [['resources/list', {}], ['resources/read', { uri: 'nds://datasets/nd999999' }]] as const) {
      const { error } = await rpc(method, params);
      assert.ok(error, method);
      assert.equal(error.code, -32000, method);
      assert.equal(error.data?.error, 'rate_limited', method);
      assert.ok(Number(error.data?.retry_after_s) > 0, method);
    }
  });

  it('does not count a caller with a key', async () => {
    server.clock.advance(61_000);
    for (let i = 0; i < BUDGET + 2; i++) {
      assert.equal(await tool('list_recordings', {}, account.key), 'answered');
      assert.equal(await tool('search_datasets', { q: 'eeg' }, account.key), 'answered');
      assert.notEqual(((await tool('get_dataset', { dataset_id: 'nd999999' }, account.key)) as { error: string }).error, 'rate_limited');
      assert.equal((await rpc('resources/list', {}, account.key)).error, undefined);
    }
    // Nor are its calls taken from the address's budget.
    for (let i = 0; i < BUDGET; i++) assert.equal(await tool('list_recordings', {}), 'answered');
  });
});
