import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, makeRepo, type Placed } from './support.js';
import type { TrainingWindow, WindowList } from '../../src/client/index.js';

type Win = TrainingWindow;
type List = WindowList;

// test.edf: 512 Hz, 3072 samples (6 s). Events at 1, 2, 3 and 5.5 s; the last runs past the end for 1 s windows.
const EVENTS = 'onset\tduration\ttrial_type\tvalue\n1.0\t0\tleft\t1\n2.0\t0\tright\t2\n3.0\t0\tleft\t1\n5.5\t0\tright\t2\n';

describe('window lists: POST /windows', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let id: string;
  let privateId: string;
  const repos: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    stranger = await createAccount(server);
    const files: Placed[] = [];
    for (let s = 1; s <= 10; s++) {
      const sub = String(s).padStart(2, '0');
      for (const ses of ['a', 'b']) files.push({ from: 'mne-python/edf/test.edf', to: `sub-${sub}/ses-${ses}/eeg/sub-${sub}_ses-${ses}_task-game_eeg.edf`, events: EVENTS });
    }
    const repo = makeRepo(files);
    const priv = makeRepo([{ from: 'mne-python/edf/test.edf', to: 'sub-01/eeg/sub-01_task-game_eeg.edf', events: EVENTS }]);
    repos.push(repo, priv);
    id = await convertedDataset(server, owner.user.id, repo);
    privateId = await convertedDataset(server, owner.user.id, priv, 'private');
  });
  after(async () => {
    await server.close();
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  async function windows(body: unknown, key?: string, accept = 'application/json'): Promise<Response> {
    return apiFetch(server, '/windows', key, { method: 'POST', body: JSON.stringify(body), headers: { accept } });
  }
  async function list(body: unknown, key?: string): Promise<List> {
    const res = await windows(body, key);
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as List;
  }

  it('cuts fixed windows that stay inside each recording', async () => {
    const answer = await list({ recordings: { dataset: id, subject: '01', session: 'a' }, fixed: { length_s: 2, stride_s: 1.5 } });
    // 3072 samples, 1024 long, stride 768: starts 0, 768, 1536 (1536 + 1024 = 2560 ≤ 3072), 2304 would end at 3328.
    assert.deepEqual(answer.windows.map((w) => w.start_sample), [0, 768, 1536]);
    assert.ok(answer.windows.every((w) => w.n_samples === 1024 && w.group === 'eeg_512hz' && w.label === null && w.subject === '01' && w.session === 'a'));
    assert.equal(answer.windows[1]!.start_s, 1.5);
    assert.match(answer.source_commits[id]!, /^[0-9a-f]{40}$/);
  });

  it('locks windows to mapped events, with an offset, leaving out those past the end', async () => {
    const answer = await list({ recordings: { dataset: id, subject: '02', session: 'b' }, events: { mapping: { left: 'L', right: 'R' }, by: 'trial_type', offset_s: -0.25, length_s: 1 } });
    assert.deepEqual(answer.windows.map((w) => [w.start_sample, w.label]), [[384, 'L'], [896, 'R'], [1408, 'L']]);
    const byValue = await list({ recordings: { dataset: id, subject: '02', session: 'b' }, events: { mapping: { '2': 'two' }, by: 'value', offset_s: 0, length_s: 0.5 } });
    assert.deepEqual(byValue.windows.map((w) => [w.start_sample, w.label]), [[1024, 'two'], [2816, 'two']]);
  });

  it('gives the same hash and windows for the same body, whatever its key order', async () => {
    const body = { recordings: { dataset: id }, fixed: { length_s: 1 }, split: { by: 'subject', fractions: { train: 0.6, valid: 0.2, test: 0.2 }, seed: 7 } };
    const reordered = { split: { seed: 7, fractions: { test: 0.2, valid: 0.2, train: 0.6 }, by: 'subject' }, fixed: { length_s: 1 }, recordings: { dataset: id } };
    const a = await list(body);
    const b = await list(reordered);
    assert.equal(a.hash, b.hash);
    assert.deepEqual(a.windows, b.windows);
    const c = await list({ ...body, split: { ...body.split, seed: 8 } });
    assert.notEqual(c.hash, a.hash);
  });

  it('never puts one subject in two splits, and splits in the proportions asked', async () => {
    for (const seed of [1, 2, 3, 'abc']) {
      const answer = await list({ recordings: { dataset: id }, fixed: { length_s: 1 }, split: { by: 'subject', fractions: { train: 0.6, valid: 0.2, test: 0.2 }, seed } });
      const bySubject = new Map<string, Set<string>>();
      for (const w of answer.windows) bySubject.set(w.subject!, (bySubject.get(w.subject!) ?? new Set()).add(w.split!));
      assert.equal(bySubject.size, 10);
      for (const [subject, splits] of bySubject) assert.equal(splits.size, 1, `subject ${subject} in ${[...splits]}`);
      const counts = { train: 0, valid: 0, test: 0 } as Record<string, number>;
      for (const splits of bySubject.values()) counts[[...splits][0]!]!++;
      assert.deepEqual(counts, { train: 6, valid: 2, test: 2 });
    }
    const bySession = await list({ recordings: { dataset: id }, fixed: { length_s: 1 }, split: { by: 'session', fractions: { train: 1, valid: 1, test: 0 }, seed: 1 } });
    const sessions = new Map<string, Set<string>>();
    for (const w of bySession.windows) sessions.set(`${w.subject}/${w.session}`, (sessions.get(`${w.subject}/${w.session}`) ?? new Set()).add(w.split!));
    assert.ok([...sessions.values()].every((s) => s.size === 1));
    assert.equal(sessions.size, 20);
  });

  it('answers NDJSON and CSV by Accept', async () => {
    const body = { recordings: { dataset: id, subject: '03' }, fixed: { length_s: 3 } };
    const json = await list(body);
    const nd = await windows(body, undefined, 'application/x-ndjson');
    assert.equal(nd.headers.get('content-type'), 'application/x-ndjson');
    const lines = (await nd.text()).trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines[0].hash, json.hash);
    assert.deepEqual(lines.slice(1), json.windows);
    const csv = await windows(body, undefined, 'text/csv');
    assert.equal(csv.headers.get('x-nds-windows-hash'), json.hash);
    const rows = (await csv.text()).trim().split('\n');
    assert.equal(rows[0], 'dataset_id,path,group,start_sample,n_samples,start_s,label,subject,session,split');
    assert.equal(rows.length, json.windows.length + 1);
  });

  it('lists no private recording for strangers, and refuses bodies that are not one kind of window', async () => {
    const body = { recordings: { dataset: privateId }, fixed: { length_s: 1 } };
    assert.equal((await list(body)).windows.length, 0);
    assert.equal((await list(body, stranger.key)).windows.length, 0);
    assert.equal((await list(body, owner.key)).windows.length, 6);
    assert.equal((await windows({ recordings: {}, fixed: { length_s: 1 }, events: { mapping: { a: 'b' }, length_s: 1 } })).status, 400);
    assert.equal((await windows({ recordings: {} })).status, 400);
    assert.equal((await windows({ recordings: {}, fixed: { length_s: -1 } })).status, 400);
  });
});
