/**
 * Access given up mid-session ends at
 * once for MCP callers and for the read grants of their `read_window` links: a member removed, a key revoked,
 * a public dataset made private (the store look-ups cached for 2 s are forgotten on each).
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { mintApiKey } from '../../src/accounts/api-keys.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset } from '../recordings/support.js';
import { call, httpClient, privateRepo, publicRepo, REAL, refused, SINE } from './support.js';

describe('MCP access ends with the access', () => {
  let server: TestServer;
  let owner: TestAccount;
  let admin: TestAccount;
  const repos: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    admin = await createAccount(server, { role: 'admin' });
    repos.push(privateRepo(), privateRepo(), publicRepo());
  });
  after(async () => {
    await server.close();
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  it('a member removed mid-session reads nothing more, nor does their link', async () => {
    const id = await convertedDataset(server, owner.user.id, repos[0]!, 'private');
    const member = await createAccount(server);
    assert.equal((await owner.api(`/datasets/${id}/members/${member.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'reader' }) })).status, 201);
    const client = await httpClient(server, member.key);
    try {
      const { result } = await call(client, 'read_window', { dataset_id: id, path: REAL, duration_s: 1, format: 'npy' });
      const link = (result.content.find((c) => c.type === 'resource_link') as { uri: string }).uri;
      assert.equal((await fetch(link)).status, 200);
      await call(client, 'get_events', { dataset_id: id, path: REAL });
      assert.equal((await owner.api(`/datasets/${id}/members/${member.user.username}`, { method: 'DELETE' })).status, 204);
      for (const tool of ['read_window', 'summarize_window', 'plot_window', 'get_events', 'get_dataset']) {
        const r = await refused(client, tool, { dataset_id: id, path: REAL, duration_s: 1 });
        assert.equal(r.error, 'dataset_not_found', tool);
      }
      assert.equal((await fetch(link)).status, 404);
    } finally {
      await client.close();
    }
  });

  it('a key revoked mid-session is refused, and its link reads nothing', async () => {
    const id = await convertedDataset(server, owner.user.id, repos[1]!, 'private');
    // The owner's second key.
    const { apiKey, row: key } = await mintApiKey(server.deps.db, owner.user.id, 'agent', 'admin');
    const client = await httpClient(server, apiKey);
    const { result } = await call(client, 'read_window', { dataset_id: id, path: REAL, duration_s: 1, format: 'npy' });
    const link = (result.content.find((c) => c.type === 'resource_link') as { uri: string }).uri;
    assert.equal((await fetch(link)).status, 200);
    const revoked = await owner.api(`/auth/keys/${key.id}`, { method: 'DELETE' });
    assert.equal(revoked.status, 200);
    const after = await fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${apiKey}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
    assert.equal(after.status, 401);
    assert.equal((await fetch(link)).status, 404);
    await client.close().catch(() => undefined);
  });

  it('a public dataset made private mid-session is unknown to anonymous callers at once', async () => {
    const id = await convertedDataset(server, owner.user.id, repos[2]!, 'public');
    const client = await httpClient(server);
    try {
      await call(client, 'read_window', { dataset_id: id, path: REAL, duration_s: 1 });
      await call(client, 'plot_window', { dataset_id: id, path: SINE, duration_s: 1 });
      const made = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
      assert.equal(made.status, 200, await made.text());
      for (const tool of ['read_window', 'summarize_window', 'plot_window', 'get_events', 'get_dataset']) {
        const r = await refused(client, tool, { dataset_id: id, path: REAL, duration_s: 1 });
        assert.equal(r.error, 'dataset_not_found', tool);
      }
      const listed = await call<{ recordings: unknown[] }>(client, 'list_recordings', { dataset: id });
      assert.deepEqual(listed.structured.recordings, []);
    } finally {
      await client.close();
    }
  });
});
