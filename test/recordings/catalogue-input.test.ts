/**
 * What the recording catalogue takes from a caller and turns into SQL: a forged cursor is refused as one
 * (`400 validation_failed`; a NUL decoded from its base64url had reached PostgreSQL and answered 500), and many
 * `channel=` labels cost a query of their rows, not of their number (a join a label had taken PostgreSQL 14 s to
 * plan for 160 labels; one anonymous request of 2 KB).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDatasetRows } from '../support/datasets.js';
import { httpClient } from '../mcp/support.js';

const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

describe('a forged recordings cursor', () => {
  let server: TestServer;
  let owner: TestAccount;
  let admin: TestAccount;
  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    admin = await createAccount(server, { role: 'admin' });
    await insertDatasetRows(server.deps.db, { id: 'nd000001', name: 'Public one', owner_id: owner.user.id });
  });
  after(async () => server.close());

  for (const [what, cursor] of [
    ['in the dataset id', cursorOf(['nd\u0000', 'x'])],
    ['in the store folder', cursorOf(['nd000001', 'x\u0000'])],
  ] as const) {
    it(`GET /recordings answers 400 validation_failed, not 500, for a NUL ${what} (anonymous and admin)`, async () => {
      for (const key of [undefined, admin.key]) {
        const res = await apiFetch(server, `/recordings?cursor=${cursor}`, key);
        const body = (await res.json()) as { error: string };
        assert.equal(res.status, 400, `${key ? 'admin' : 'anonymous'}: ${JSON.stringify(body)}`);
        assert.equal(body.error, 'validation_failed');
      }
    });
  }

  it('MCP list_recordings refuses it as validation_failed, not internal_error', async () => {
    const client = await httpClient(server);
    try {
      const result = (await client.callTool({ name: 'list_recordings', arguments: { cursor: cursorOf(['nd\u0000', 'x']) } })) as CallToolResult;
      assert.equal(result.isError, true);
      const body = JSON.parse((result.content[0] as { text: string }).text) as { error: string };
      assert.equal(body.error, 'validation_failed', JSON.stringify(body));
    } finally {
      await client.close();
    }
  });
});

describe('many channel= labels in the recording catalogue', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
    const owner = await createAccount(server);
    await insertDatasetRows(server.deps.db, [
      { id: 'nd000011', name: 'Public one', owner_id: owner.user.id },
      { id: 'nd000012', name: 'Public two', owner_id: owner.user.id },
    ]);
  });
  after(async () => server.close());

  it('answers 160 distinct channel labels (within the schema limit of 256) in well under 5 s', async () => {
    const query = Array.from({ length: 160 }, (_, i) => `channel=C${i}`).join('&');
    assert.ok(query.length < 4096, 'within the query length limit');
    const started = Date.now();
    const res = await apiFetch(server, `/recordings?${query}`);
    const ms = Date.now() - started;
    const body = (await res.json()) as { recordings: unknown[] };
    assert.equal(res.status, 200);
    assert.deepEqual(body.recordings, []);
    assert.ok(ms < 5000, `GET /recordings with 160 channel labels answered after ${ms} ms`);
  });
});
