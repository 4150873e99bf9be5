import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
// Through the package's own exports, as a user's code imports it.
import { EmptyWindowListError, NdsApiError, NdsClient } from 'nds/client';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, makeRepo } from '../recordings/support.js';

const EVENTS = 'onset\tduration\ttrial_type\n1.0\t0\tleft\n2.0\t0\tright\n3.0\t0\tleft\n';

describe('the TypeScript client (nds/client)', () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  let privateId: string;
  const repos: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    const repo = makeRepo([
      { from: 'mne-python/edf/test.edf', to: 'sub-01/eeg/sub-01_task-game_eeg.edf', events: EVENTS },
      { from: 'mne-python/edf/test.edf', to: 'sub-02/eeg/sub-02_task-game_eeg.edf', events: EVENTS },
    ]);
    const priv = makeRepo([{ from: 'mne-python/edf/test.edf', to: 'sub-01/eeg/sub-01_task-game_eeg.edf' }]);
    repos.push(repo, priv);
    id = await convertedDataset(server, owner.user.id, repo);
    privateId = await convertedDataset(server, owner.user.id, priv, 'private');
  });
  after(async () => {
    await server.close();
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  it('lists recordings, reads windows equal to the route, and lists windows', async () => {
    const nds = new NdsClient({ baseUrl: server.url });
    const recordings = await nds.listRecordings({ dataset: id });
    assert.equal(recordings.length, 2);
    const window = await nds.readWindow({ dataset_id: id, path: recordings[0]!.path, start_sample: 10, n_samples: 100, channels: ['A1', 'A2'] });
    assert.deepEqual(window.shape, [2, 100]);
    assert.deepEqual(window.channels, ['A1', 'A2']);
    const json = (await (await apiFetch(server, `/datasets/${id}/signal?path=${recordings[0]!.path}&start_sample=10&n_samples=100&channels=A1,A2&format=json`)).json()) as { data: number[][] };
    assert.deepEqual(Array.from(window.data), json.data.flat());
    const list = await nds.listWindows({ recordings: { dataset: id }, events: { mapping: { left: 'L', right: 'R' }, length_s: 0.5 } });
    assert.equal(list.windows.length, 6);
    assert.equal((await nds.listRecordings({ dataset: privateId })).length, 0);
    const mine = new NdsClient({ baseUrl: server.url, apiKey: owner.key });
    assert.equal((await mine.listRecordings({ dataset: privateId })).length, 1);
    await assert.rejects(nds.readWindow({ dataset_id: privateId, path: 'sub-01/eeg/sub-01_task-game_eeg.edf', start_sample: 0, n_samples: 1 }), (err: unknown) => err instanceof NdsApiError && err.status === 404);
  });

  it('is imported by plain Node.js, without a TypeScript loader, as an installed package is', async () => {
    // Node strips no types under node_modules: `nds/client` must resolve to JavaScript (scripts/build-client.mjs).
    const script = `
      import { NdsClient } from 'nds/client';
      const nds = new NdsClient({ baseUrl: process.argv[1] });
      const [first] = await nds.listRecordings({ dataset: process.argv[2] });
      const w = await nds.readWindow({ dataset_id: process.argv[2], path: first.path, start_sample: 10, n_samples: 100, channels: ['A1'] });
      console.log(JSON.stringify({ shape: w.shape, sum: Array.from(w.data).reduce((a, b) => a + b, 0) }));`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, server.url, id], { env: { ...process.env, NODE_OPTIONS: '' } });
    const answer = JSON.parse(stdout) as { shape: number[]; sum: number };
    const nds = new NdsClient({ baseUrl: server.url });
    const [first] = await nds.listRecordings({ dataset: id });
    const window = await nds.readWindow({ dataset_id: id, path: first!.path, start_sample: 10, n_samples: 100, channels: ['A1'] });
    assert.deepEqual(answer, { shape: [1, 100], sum: Array.from(window.data).reduce((a, b) => a + b, 0) });
  });

  it('streams batches in order, every window once, with a bounded number of requests in flight', async () => {
    let inFlight = 0;
    let most = 0;
    const counting: typeof fetch = async (input, init) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        const res = await fetch(input, init);
        const body = await res.arrayBuffer();
        return new Response(body, { status: res.status, headers: res.headers });
      } finally {
        inFlight--;
      }
    };
    const nds = new NdsClient({ baseUrl: server.url, fetch: counting });
    const list = await nds.listWindows({ recordings: { dataset: id }, fixed: { length_s: 0.25 } });
    assert.equal(list.windows.length, 48);
    const seen: string[] = [];
    for await (const batch of nds.batches(list.windows, { batchSize: 5, concurrency: 3, prefetch: 2, channels: ['A1'] })) {
      assert.ok(batch.data.length <= 5);
      batch.shapes.forEach((s) => assert.deepEqual(s, [1, 128]));
      seen.push(...batch.windows.map((w) => `${w.path}@${w.start_sample}`));
    }
    assert.deepEqual(seen, list.windows.map((w) => `${w.path}@${w.start_sample}`));
    assert.ok(most <= 3 && most >= 2, `at most ${most} in flight`);
  });

  it('finds its server and key as the nds command does: given, then NDS_API_URL and NDS_API_KEY, then the stored credentials', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'nds-ts-identity-'));
    repos.push(home);
    const none = new NdsClient({ env: { XDG_CONFIG_HOME: home } });
    assert.deepEqual(await none.identity(), { baseUrl: 'http://localhost:8080', apiKey: undefined, urlSource: 'default', keySource: undefined });
    mkdirSync(path.join(home, 'nds'));
    writeFileSync(path.join(home, 'nds', 'credentials.json'), JSON.stringify({ api_url: `${server.url}/`, api_key: owner.key, saved_at: new Date().toISOString() }));
    const stored = new NdsClient({ env: { XDG_CONFIG_HOME: home } });
    assert.deepEqual(await stored.identity(), { baseUrl: server.url, apiKey: owner.key, urlSource: 'credentials', keySource: 'credentials' });
    assert.equal((await stored.listRecordings({ dataset: privateId })).length, 1);
    const fromEnv = new NdsClient({ env: { XDG_CONFIG_HOME: home, NDS_API_URL: server.url, NDS_API_KEY: 'nds_wrong' } });
    assert.equal((await fromEnv.identity()).keySource, 'NDS_API_KEY');
    await assert.rejects(fromEnv.listRecordings({ dataset: privateId }), (err: unknown) => err instanceof NdsApiError && err.status === 401);
    const given = new NdsClient({ baseUrl: server.url, apiKey: owner.key, env: { NDS_API_KEY: 'nds_wrong' } });
    assert.equal((await given.listRecordings({ dataset: privateId })).length, 1);
    // Neither key goes to another server.
    const other = new NdsClient({ baseUrl: 'http://127.0.0.1:9', env: { XDG_CONFIG_HOME: home, NDS_API_URL: server.url, NDS_API_KEY: 'nds_wrong' } });
    assert.equal((await other.identity()).apiKey, undefined);
  });

  it('throws on an empty window list with the event types the recordings have, and keeps integer labels', async () => {
    const nds = new NdsClient({ baseUrl: server.url });
    const body = { recordings: { dataset: id }, events: { mapping: { standard: 0, target: 1 }, length_s: 0.5 } };
    await assert.rejects(nds.listWindows(body), (err: unknown) => err instanceof EmptyWindowListError && /"left" \(4\), "right" \(2\)/.test(err.message));
    assert.deepEqual((await nds.listWindows(body, { allowEmpty: true })).windows, []);
    const ints = await nds.listWindows({ ...body, events: { mapping: { left: 0, right: 1 }, length_s: 0.5 } });
    assert.deepEqual(ints.windows.map((w) => w.label), [0, 1, 0, 0, 1, 0]);
    assert.deepEqual(ints.warnings, []);
  });
});
