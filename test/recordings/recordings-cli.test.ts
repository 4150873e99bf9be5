// test.sh: embedded pass only. What this file checks happens in the client (a command's output, its files, its
// retries); the routes it calls have their database work run on PostgreSQL by the HTTP tests.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { nds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, makeRepo } from './support.js';

const EVENTS = 'onset\tduration\ttrial_type\n1.0\t0\tleft\n2.0\t0\tright\n';

describe('nds recordings list, nds windows export, nds signal get, nds signal events', () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  let privateId: string;
  let out: string;
  const repos: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    const repo = makeRepo([
      { from: 'mne-python/edf/test.edf', to: 'sub-01/eeg/sub-01_task-game_eeg.edf', events: EVENTS },
      { from: 'mne-python/edf/test.bdf', to: 'sub-02/eeg/sub-02_task-rest_eeg.bdf' },
    ]);
    const priv = makeRepo([{ from: 'mne-python/edf/test.edf', to: 'sub-01/eeg/sub-01_task-secret_eeg.edf' }]);
    repos.push(repo, priv);
    id = await convertedDataset(server, owner.user.id, repo);
    privateId = await convertedDataset(server, owner.user.id, priv, 'private');
    out = mkdtempSync(path.join(os.tmpdir(), 'nds-rec-cli-'));
  });
  after(async () => {
    await server.close();
    for (const r of [...repos, out]) rmSync(r, { recursive: true, force: true });
  });

  const anonymous = () => ({ NDS_API_URL: server.url });

  it('lists recordings with filters, as a table or JSON, private ones only with their owner\'s key', async () => {
    const table = await nds(['recordings', 'list', '--dataset', id], anonymous());
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /sub-01\/eeg\/sub-01_task-game_eeg\.edf/);
    assert.match(table.stdout, /sub-02\/eeg\/sub-02_task-rest_eeg\.bdf/);
    const json = await nds(['recordings', 'list', '--task', 'game', '--event-type', 'left', '--json'], anonymous());
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual((JSON.parse(json.stdout) as { recordings: Array<{ path: string }> }).recordings.map((r) => r.path), ['sub-01/eeg/sub-01_task-game_eeg.edf']);
    const hidden = await nds(['recordings', 'list', '--task', 'secret', '--json'], anonymous());
    assert.deepEqual(JSON.parse(hidden.stdout), { recordings: [] });
    const mine = await nds(['recordings', 'list', '--dataset', privateId, '--json'], { ...anonymous(), NDS_API_KEY: owner.key });
    assert.equal((JSON.parse(mine.stdout) as { recordings: unknown[] }).recordings.length, 1);
    const bad = await nds(['recordings', 'list', '--rate', 'fast'], anonymous());
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--rate must be a non-negative number/);
  });

  it('exports a window list as CSV, the same as the route gives', async () => {
    const file = path.join(out, 'windows.csv');
    const run = await nds(['windows', 'export', '--dataset', id, '--events', 'left=L,right=R', '--length', '0.5', '--format', 'csv', '--out', file], anonymous());
    assert.equal(run.code, 0, run.stderr);
    const body = { recordings: { dataset: id }, events: { mapping: { left: 'L', right: 'R' }, by: 'trial_type', offset_s: 0, length_s: 0.5 } };
    const direct = await apiFetch(server, '/windows', undefined, { method: 'POST', body: JSON.stringify(body), headers: { accept: 'text/csv' } });
    assert.equal(readFileSync(file, 'utf8'), await direct.text());
    assert.match(run.stderr, new RegExp(`hash ${direct.headers.get('x-nds-windows-hash')}`));
  });

  it('prints the warnings of an empty list and fails, writing nothing; integer labels stay integers', async () => {
    const file = path.join(out, 'empty.csv');
    const run = await nds(['windows', 'export', '--dataset', id, '--events', 'standard=0,target=1', '--length', '0.5', '--format', 'csv', '--out', file], anonymous());
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /warning: No event matches the mapping \("standard", "target" by trial_type\)\. The 2 recordings have these trial_type values: "left" \(1\), "right" \(1\)\./);
    assert.match(run.stderr, /no window: the list is empty; .*empty\.csv was not written/);
    assert.equal(existsSync(file), false);
    const ints = await nds(['windows', 'export', '--dataset', id, '--events', 'left=0,right=1', '--length', '0.5', '--format', 'json'], anonymous());
    assert.equal(ints.code, 0, ints.stderr);
    assert.deepEqual((JSON.parse(ints.stdout) as { windows: Array<{ label: unknown }> }).windows.map((w) => w.label), [0, 1]);
  });

  it('writes one window to a .npy file', async () => {
    const file = path.join(out, 'x.npy');
    const run = await nds(['signal', 'get', id, 'sub-01/eeg/sub-01_task-game_eeg.edf', '--start', '1', '--duration', '0.5', '--channels', 'A1,A2', '--out', file], anonymous());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /shape 2,256/);
    const direct = await apiFetch(server, `/datasets/${id}/signal?path=sub-01/eeg/sub-01_task-game_eeg.edf&start=1&duration=0.5&channels=A1,A2`);
    assert.deepEqual(readFileSync(file), Buffer.from(await direct.arrayBuffer()));
    const past = await nds(['signal', 'get', id, 'sub-01/eeg/sub-01_task-game_eeg.edf', '--start', '5', '--duration', '5', '--out', file], anonymous());
    assert.notEqual(past.code, 0);
    assert.match(past.stderr, /past the end/);
  });
  it("prints a recording's events as JSON or CSV, the same as the route gives, and refuses a stranger's private one", async () => {
    const rec = 'sub-01/eeg/sub-01_task-game_eeg.edf';
    const json = await nds(['signal', 'events', id, rec], anonymous());
    assert.equal(json.code, 0, json.stderr);
    const events = JSON.parse(json.stdout).events as Array<{ onset: number; trial_type: string }>;
    assert.deepEqual(events.map((e) => [e.onset, e.trial_type]), [[1, 'left'], [2, 'right']]);
    const file = path.join(out, 'events.csv');
    const csv = await nds(['signal', 'events', id, rec, '--format', 'csv', '--out', file], anonymous());
    assert.equal(csv.code, 0, csv.stderr);
    const direct = await apiFetch(server, `/datasets/${id}/events?path=${encodeURIComponent(rec)}&format=csv`);
    assert.equal(readFileSync(file, 'utf8'), await direct.text());
    const hidden = await nds(['signal', 'events', privateId, 'sub-01/eeg/sub-01_task-secret_eeg.edf'], anonymous());
    assert.notEqual(hidden.code, 0);
  });
});
