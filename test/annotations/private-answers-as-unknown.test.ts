/**
 * The raw HTTP answers (status, every header but Date and X-Request-Id, body with the id normalised) of the MCP
 * endpoint and of every annotation route, for a private dataset the caller cannot read (anonymous, a stranger, a member removed) and
 * for an id that does not exist, are the same.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from '../datasets/support.js';
import { uploadedDataset } from './support.js';

const UNKNOWN = 'nd999999';

type Snap = { status: number; headers: Record<string, string>; body: string };

async function snap(res: Response, id: string): Promise<Snap> {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    if (k !== 'date' && k !== 'x-request-id') headers[k] = v.replaceAll(id, 'ID');
  });
  return { status: res.status, headers, body: (await res.text()).replaceAll(id, 'ID') };
}

describe('a private dataset answers as an unknown id', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let removed: TestAccount;
  let id: string;
  let recording: string;
  let annotationId: string;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    stranger = await createAccount(server);
    removed = await createAccount(server);
    ({ id, recording } = await uploadedDataset(server, owner));
    await json(await owner.api(`/datasets/${id}/members/${removed.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'maintainer' }) }), 201);
    const made = await json(await owner.api(`/datasets/${id}/annotations`, { method: 'POST', body: JSON.stringify({ path: recording, onset: 0, duration: 0.1, label: 'x' }) }), 201);
    annotationId = made.annotations[0].id;
    const gone = await owner.api(`/datasets/${id}/members/${removed.user.username}`, { method: 'DELETE' });
    assert.equal(gone.status, 204);
  });
  after(() => server.close());

  const callers = () => [
    { name: 'anonymous', key: undefined as string | undefined },
    { name: 'stranger', key: stranger.key },
    { name: 'removed member', key: removed.key },
  ];

  it('annotation routes', async () => {
    const diffs: string[] = [];
    const q = (p: string) => `path=${encodeURIComponent(p)}`;
    const cases = (ds: string): Array<[string, string, RequestInit]> => [
      ['list', `/datasets/${ds}/annotations?${q(recording)}`, {}],
      ['list other path', `/datasets/${ds}/annotations?${q('nope.edf')}`, {}],
      ['history', `/datasets/${ds}/annotations/history?${q(recording)}`, {}],
      ['history after', `/datasets/${ds}/annotations/history?${q(recording)}&after=3`, {}],
      ['labels', `/datasets/${ds}/annotations/labels`, {}],
      ['export', `/datasets/${ds}/annotations/export?${q(recording)}`, {}],
      ['create', `/datasets/${ds}/annotations`, { method: 'POST', body: JSON.stringify({ path: recording, onset: 0, duration: 0, label: 'y' }) }],
      ['create if-match', `/datasets/${ds}/annotations`, { method: 'POST', headers: { 'if-match': '"1"' }, body: JSON.stringify({ path: recording, onset: 0, duration: 0, label: 'y' }) }],
      ['create bad onset', `/datasets/${ds}/annotations`, { method: 'POST', body: JSON.stringify({ path: recording, onset: 1e8, duration: 0, label: 'y' }) }],
      ['commit', `/datasets/${ds}/annotations/commit`, { method: 'POST', body: JSON.stringify({ message: 'm' }) }],
      ['patch existing', `/datasets/${ds}/annotations/${annotationId}`, { method: 'PATCH', body: JSON.stringify({ label: 'z' }) }],
      ['patch random', `/datasets/${ds}/annotations/${randomUUID()}`, { method: 'PATCH', body: JSON.stringify({ label: 'z' }) }],
      ['delete existing', `/datasets/${ds}/annotations/${annotationId}`, { method: 'DELETE' }],
      ['delete random', `/datasets/${ds}/annotations/${randomUUID()}`, { method: 'DELETE' }],
    ];
    for (const caller of callers()) {
      const hidden = cases(id);
      const unknown = cases(UNKNOWN);
      for (let i = 0; i < hidden.length; i++) {
        const fetchIt = (p: string, init: RequestInit) => {
          const headers = new Headers(init.headers);
          if (caller.key) headers.set('authorization', `Bearer ${caller.key}`);
          if (init.body) headers.set('content-type', 'application/json');
          return fetch(`${server.url}${p}`, { ...init, headers });
        };
        const a = await snap(await fetchIt(hidden[i]![1], hidden[i]![2]), id);
        const b = await snap(await fetchIt(unknown[i]![1].replace(annotationId, annotationId), unknown[i]![2]), UNKNOWN);
        // A random uuid differs between the two: normalise uuids.
        const norm = (s: Snap) => JSON.stringify(s).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'UUID');
        if (norm(a) !== norm(b)) diffs.push(`${caller.name} ${hidden[i]![0]}:\n  private ${norm(a)}\n  unknown ${norm(b)}`);
      }
    }
    assert.deepEqual(diffs, []);
  });

  it('mcp', async () => {
    const diffs: string[] = [];
    const rpc = (key: string | undefined, body: unknown) =>
      fetch(`${server.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
    const tool = (name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    const cases = (ds: string) => [
      tool('get_dataset', { dataset_id: ds }),
      tool('list_recordings', { dataset: ds }),
      tool('list_recordings', { dataset: ds, cursor: Buffer.from(JSON.stringify([ds, 'a'])).toString('base64url') }),
      tool('get_events', { dataset_id: ds, path: recording }),
      tool('get_events', { dataset_id: ds, path: recording, group: 'nope' }),
      tool('read_window', { dataset_id: ds, path: recording, duration_s: 0.1 }),
      tool('read_window', { dataset_id: ds, path: recording, start_s: 0, start_sample: 0 }),
      tool('read_window', { dataset_id: ds, path: recording, duration_s: 0.1, format: 'npy' }),
      tool('summarize_window', { dataset_id: ds, path: recording, duration_s: 0.1 }),
      tool('plot_window', { dataset_id: ds, path: recording }),
      tool('plot_window', { dataset_id: ds, path: recording, duration_s: 0.5, ref: 'bogus' }),
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: `nds://datasets/${ds}` } },
      { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: `nds://datasets/${ds}/recordings/${recording}` } },
    ];
    for (const caller of callers()) {
      const hidden = cases(id);
      const unknown = cases(UNKNOWN);
      for (let i = 0; i < hidden.length; i++) {
        const a = await snap(await rpc(caller.key, hidden[i]), id);
        const b = await snap(await rpc(caller.key, unknown[i]), UNKNOWN);
        if (JSON.stringify(a) !== JSON.stringify(b)) diffs.push(`${caller.name} ${JSON.stringify(hidden[i]).slice(0, 120)}:\n  private ${JSON.stringify(a)}\n  unknown ${JSON.stringify(b)}`);
      }
    }
    // The owner reads it: the comparison is of a dataset that answers its holders.
    const mine = await snap(await rpc(owner.key, tool('get_dataset', { dataset_id: id })), id);
    assert.match(mine.body, /"visibility":"private"/);
    assert.deepEqual(diffs, []);
  });
});
