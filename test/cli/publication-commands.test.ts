import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startNds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { addVersion } from '../support/versions.js';

describe('nds datasets search, nds sandbox, nds admin publish / doi', () => {
  let server: TestServer;
  let admin: TestAccount;
  let id: string;
  const nds = async (key: string, ...args: string[]) => startNds(args, { NDS_API_URL: server.url, NDS_API_KEY: key }).done;

  before(async () => {
    server = await startTestServer();
    admin = await createAccount(server, { role: 'admin' });
    const res = await admin.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Grip EMG', authors: ['Ada Lovelace'], license: 'CC0-1.0', description: 'Forearm EMG during grip.' }) });
    id = ((await res.json()) as { id: string }).id;
    await addVersion(server, admin, id, '1.0.0');
    await admin.api(`/datasets/${id}/publish/request`, { method: 'POST' });
  });
  after(async () => server?.close());

  it('lists and approves a publication request, then shows the test DOIs', async () => {
    const list = await nds(admin.key, 'admin', 'publish', 'list', '--status', 'pending', '--json');
    assert.equal(list.code, 0, list.stderr);
    const [request] = JSON.parse(list.stdout).requests;
    assert.equal(request.dataset_id, id);
    const approve = await nds(admin.key, 'admin', 'publish', 'approve', String(request.id));
    assert.equal(approve.code, 0, approve.stderr);
    assert.match(approve.stdout, new RegExp(`request ${request.id} for ${id} v1.0.0: approved, DOI 10.5072/nds.${id}.v1.0.0`));
    const show = await nds(admin.key, 'admin', 'doi', 'show', id);
    assert.match(show.stdout, /TEST DOIs/);
    assert.match(show.stdout, new RegExp(`concept DOI\\s+10.5072/nds.${id}`));
    const deny = await nds(admin.key, 'admin', 'publish', 'deny', String(request.id), '--reason', 'late');
    assert.equal(deny.code, 1);
    assert.match(deny.stderr, /publication_not_pending/);
  });

  it('searches, as a table and as JSON', async () => {
    const table = await nds(admin.key, 'datasets', 'search', 'grip');
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, new RegExp(`^ID\\s+NAME[\\s\\S]*${id}\\s+Grip EMG`, 'm'));
    const j = await nds(admin.key, 'datasets', 'search', 'forearm', '--semantic', '--json');
    const answer = JSON.parse(j.stdout);
    assert.equal(answer.mode_used, 'fulltext');
    assert.deepEqual(answer.results.map((r: { id: string }) => r.id), [id]);
  });

  it('shows sandbox status and refuses completion with the reason', async () => {
    const trainee = await createAccount(server);
    const s = await nds(trainee.key, 'sandbox', 'status');
    assert.match(s.stdout, /status\s+not_started/);
    const c = await nds(trainee.key, 'sandbox', 'complete', '--json');
    assert.equal(c.code, 1);
    assert.match(c.stderr, /sandbox training is not finished/);
  });
});
