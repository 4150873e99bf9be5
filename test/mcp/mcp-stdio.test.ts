import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset } from '../recordings/support.js';
import { call, httpClient, privateRepo, publicRepo, REAL, refused, SINE } from './support.js';

const repoRoot = path.resolve(import.meta.dirname, '../..');

describe('nds mcp: the MCP server over stdio, reading the nds server with the CLI\'s credentials', () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  let privateId: string;
  let home: string;
  const repos: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    repos.push(publicRepo(), privateRepo());
    id = await convertedDataset(server, owner.user.id, repos[0]!);
    privateId = await convertedDataset(server, owner.user.id, repos[1]!, 'private');
    home = mkdtempSync(path.join(os.tmpdir(), 'nds-mcp-home-'));
  });
  after(async () => {
    await server.close();
    for (const d of [...repos, home]) rmSync(d, { recursive: true, force: true });
  });

  /** `nds mcp` spawned through bin/nds.js, as an agent's configuration starts it. */
  async function stdioClient(key?: string): Promise<Client> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), NDS_API_URL: server.url };
    if (key) env.NDS_API_KEY = key;
    const client = new Client({ name: 'nds-stdio-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [path.join(repoRoot, 'bin/nds.js'), 'mcp'], env, cwd: repoRoot, stderr: 'pipe' }));
    return client;
  }

  it('lists the same tools and answers the same as the HTTP server', async () => {
    const client = await stdioClient();
    const direct = await httpClient(server);
    try {
      const [viaStdio, viaHttp] = [await client.listTools(), await direct.listTools()];
      assert.deepEqual(viaStdio.tools, viaHttp.tools);
      const args = { dataset_id: id, path: SINE, start_s: 1, duration_s: 0.5, channels: ['Fz', 'Cz'], format: 'json' };
      assert.deepEqual((await call(client, 'read_window', args)).structured, (await call(direct, 'read_window', args)).structured);
      const events = await call<{ events: Array<{ trial_type: string }> }>(client, 'get_events', { dataset_id: id, path: SINE });
      assert.deepEqual(events.structured.events.map((e) => e.trial_type), ['stimulus', 'response', 'stimulus']);
    } finally {
      await client.close();
      await direct.close();
    }
  });

  it('reads as the key of NDS_API_KEY: the private dataset for its owner, unknown without the key', async () => {
    const anonymous = await stdioClient();
    const ownerClient = await stdioClient(owner.key);
    try {
      const hidden = await refused(anonymous, 'get_dataset', { dataset_id: privateId });
      assert.equal(hidden.error, 'dataset_not_found');
      const seen = await call<{ dataset: { id: string } }>(ownerClient, 'get_dataset', { dataset_id: privateId });
      assert.equal(seen.structured.dataset.id, privateId);
      const window = await call<{ shape: number[] }>(ownerClient, 'read_window', { dataset_id: privateId, path: REAL, duration_s: 1, format: 'json', channels: ['A1'] });
      assert.equal(window.structured.shape[0], 1);
    } finally {
      await anonymous.close();
      await ownerClient.close();
    }
  });

  it('answers a request with a JSON-RPC error when the server cannot be reached', async () => {
    const client = new Client({ name: 'nds-stdio-test', version: '1.0.0' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [path.join(repoRoot, 'bin/nds.js'), 'mcp'], env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), NDS_API_URL: 'http://127.0.0.1:9' }, cwd: repoRoot, stderr: 'pipe' });
    await assert.rejects(client.connect(transport), /did not answer/);
    await transport.close();
  });
});
