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

  it('answers a mapping that matches no event with no window and warnings naming the event types there are, in every format', async () => {
    const body = { recordings: { dataset: id, subject: '01' }, events: { mapping: { standard: 'S', target: 'T' }, length_s: 1 } };
    const answer = await list(body);
    assert.deepEqual(answer.windows, []);
    assert.equal(answer.warnings.length, 1);
    // 2 recordings of sub-01, each with 2 'left' and 2 'right' events.
    assert.match(answer.warnings[0]!, /No event matches the mapping \("standard", "target" by trial_type\)\. The 2 recordings have these trial_type values: "left" \(4\), "right" \(4\)\./);
    const nd = await windows(body, undefined, 'application/x-ndjson');
    assert.deepEqual(JSON.parse((await nd.text()).split('\n')[0]!).warnings, answer.warnings);
    const csv = await windows(body, undefined, 'text/csv');
    assert.deepEqual(JSON.parse(decodeURIComponent(csv.headers.get('x-nds-warnings')!)), answer.warnings);
    assert.equal((await csv.text()).trim().split('\n').length, 1);
    const byValue = await list({ ...body, events: { ...body.events, by: 'value' } });
    assert.match(byValue.warnings[0]!, /value values: "1" \(4\), "2" \(4\)/);
  });

  it('warns of a mapping key that matched nothing, of windows past the end, and of no recording at all', async () => {
    const answer = await list({ recordings: { dataset: id, subject: '02', session: 'b' }, events: { mapping: { left: 'L', right: 'R', up: 'U' }, length_s: 1 } });
    assert.equal(answer.windows.length, 3);
    assert.deepEqual(answer.warnings, [
      '"up" of the mapping matched no event by trial_type.',
      '1 window of matched events fell past the start or end of its recording and was left out (check offset_s and length_s).',
    ]);
    const none = await list({ recordings: { dataset: 'nd999999', task: 'game' }, fixed: { length_s: 1 } });
    assert.deepEqual(none.windows, []);
    assert.deepEqual(none.warnings, ['No recording you may read matches the filters (dataset=nd999999, task=game); GET /recordings with the same filters lists what does.']);
    const tooLong = await list({ recordings: { dataset: id, subject: '03' }, fixed: { length_s: 10 } });
    assert.deepEqual(tooLong.warnings, ['2 of the 2 recordings are shorter than fixed.length_s (10 s) and give no window.']);
    assert.deepEqual((await list({ recordings: { dataset: id, subject: '03' }, fixed: { length_s: 1 } })).warnings, []);
  });

  it('names each split left empty: one subject split 0.7/0.15/0.15 by subject fills only one', async () => {
    const answer = await list({ recordings: { dataset: id, subject: '04' }, fixed: { length_s: 1 }, split: { by: 'subject', fractions: { train: 0.7, valid: 0.15, test: 0.15 }, seed: 42 } });
    assert.ok(answer.windows.length > 0);
    const used = new Set(answer.windows.map((w) => w.split));
    assert.equal(used.size, 1);
    const empty = (['train', 'valid', 'test'] as const).filter((s) => !used.has(s));
    assert.deepEqual(
      answer.warnings,
      empty.map((s) => `Split "${s}" is empty: 1 subject cannot fill every split (train 0.7, valid 0.15, test 0.15); split by a finer unit (split.by "session" or "recording"), or select more subjects.`),
    );
    // By session, sub-04's two sessions fill two splits; a split asked with fraction 0 is not missed.
    const two = await list({ recordings: { dataset: id, subject: '04' }, fixed: { length_s: 1 }, split: { by: 'session', fractions: { train: 0.5, valid: 0.5, test: 0 }, seed: 1 } });
    assert.deepEqual(two.warnings, []);
  });

  it('takes integer labels and keeps them integers in JSON, NDJSON and CSV', async () => {
    const body = { recordings: { dataset: id, subject: '02', session: 'b' }, events: { mapping: { left: 0, right: 1 }, length_s: 0.5 } };
    const answer = await list(body);
    assert.deepEqual(answer.windows.map((w) => w.label), [0, 1, 0, 1]);
    const nd = await windows(body, undefined, 'application/x-ndjson');
    assert.deepEqual((await nd.text()).trim().split('\n').slice(1).map((l) => (JSON.parse(l) as Win).label), [0, 1, 0, 1]);
    const csv = await windows(body, undefined, 'text/csv');
    assert.deepEqual((await csv.text()).trim().split('\n').slice(1).map((l) => l.split(',')[6]), ['0', '1', '0', '1']);
    // A string label stays a string, and the two are different lists.
    const strings = await list({ ...body, events: { ...body.events, mapping: { left: '0', right: '1' } } });
    assert.deepEqual(strings.windows.map((w) => w.label), ['0', '1', '0', '1']);
    assert.notEqual(strings.hash, answer.hash);
    assert.equal((await windows({ ...body, events: { ...body.events, mapping: { left: 0.5 } } })).status, 400);
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
