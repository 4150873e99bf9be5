/**
 * A member removed from a private dataset reads nothing of it from the moment the removal answers, by every
 * path that reads samples (the signal route, the MCP window tools), and writes nothing with the upload
 * credentials they were given (docs/security.md: no credential outlives its holder's access). The read side
 * remembers where a reader's stores are for 2 s (`recordings/store-lookups.ts`): a change of members makes it
 * forget the dataset at once in the process that made it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, makeRepo } from '../recordings/support.js';

const EDF = 'sub-01/eeg/sub-01_task-rest_eeg.edf';

describe('a member removed from a private dataset', () => {
  let server: TestServer;
  let owner: TestAccount;
  let privateId: string;
  const dirs: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    const repo = makeRepo([{ from: 'mne-python/edf/test.edf', to: EDF }]);
    dirs.push(repo);
    privateId = await convertedDataset(server, owner.user.id, repo, 'private');
  });
  after(async () => {
    await server?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function addMember(member: TestAccount): Promise<void> {
    const added = await owner.api(`/datasets/${privateId}/members/${member.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'reader' }) });
    assert.equal(added.status, 201, await added.clone().text());
  }

  async function removeMember(member: TestAccount): Promise<void> {
    const removed = await owner.api(`/datasets/${privateId}/members/${member.user.username}`, { method: 'DELETE' });
    assert.equal(removed.status, 204, await removed.clone().text());
  }

  it('a member removed reads no signal window from that moment (GET /datasets/:id/signal)', async () => {
    const member = await createAccount(server);
    const q = `path=${encodeURIComponent(EDF)}&start=0&duration=0.5&format=json`;
    await addMember(member);
    assert.equal((await member.api(`/datasets/${privateId}/signal?${q}`)).status, 200, 'a member reads the window');
    await removeMember(member);
    // No time passes: the removal takes effect at once.
    assert.equal((await member.api(`/datasets/${privateId}/events?path=${encodeURIComponent(EDF)}`)).status, 404, 'events refuse at once');
    assert.equal((await member.api(`/datasets/${privateId}/recordings`)).status, 404, 'the catalogue refuses at once');
    const later = await member.api(`/datasets/${privateId}/signal?${q}`);
    const body = await later.text();
    assert.equal(later.status, 404, `a removed member still reads the samples: ${later.status} ${body.slice(0, 120)}`);
    assert.ok(!body.includes('"data"'), 'no samples in the answer');
  });

  it('a member removed reads no window through the MCP server from that moment (read_window)', async () => {
    const member = await createAccount(server);
    const call = () =>
      apiFetch(server, '/mcp', member.key, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'read_window', arguments: { dataset_id: privateId, path: EDF, duration_s: 0.1 } } }),
      }).then((r) => r.json() as Promise<{ result: { isError?: boolean; content: Array<{ text?: string }> } }>);
    await addMember(member);
    assert.notEqual((await call()).result.isError, true, 'a member reads the window');
    await removeMember(member);
    const later = await call();
    assert.equal(later.result.isError, true, `a removed member still reads the samples: ${later.result.content[0]?.text?.slice(0, 120)}`);
    assert.match(later.result.content[0]!.text!, /dataset_not_found/);
  });

  it('a maintainer removed writes nothing with the upload credentials given to them', async () => {
    const maintainer = await createAccount(server);
    const added = await owner.api(`/datasets/${privateId}/members/${maintainer.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'maintainer' }) });
    assert.equal(added.status, 201, await added.text());
    const up = (await (await maintainer.api(`/datasets/${privateId}/upload-credentials`, { method: 'POST' })).json()) as { token: string; endpoint: string };
    const put = (bytes: string) =>
      fetch(`${up.endpoint}${privateId}/objects/${createHash('sha256').update(bytes).digest('hex')}`, { method: 'PUT', headers: { authorization: `Bearer ${up.token}` }, body: bytes });
    assert.equal((await put('while a maintainer')).status, 200);
    await removeMember(maintainer);
    const refused = await put('after the removal');
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as { error: string }).error, 'signature_invalid');
    assert.equal(await server.deps.objects.head(`${privateId}/objects/${createHash('sha256').update('after the removal').digest('hex')}`), undefined);
  });
});
