import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiFetch, createAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, fixtures, makeRepo } from './support.js';

const EVENTS = 'bids/eeg_matchingpennies/sub-05/eeg/sub-05_task-matchingpennies_events.tsv';
const DATA = 'sub-06/eeg/sub-06_task-matchingpennies_eeg.edf';

describe('events as data: every _events.tsv column and each event\'s sample, GET /datasets/:id/events', () => {
  let server: TestServer;
  let id: string;
  let repo: string;

  before(async () => {
    server = await startTestServer();
    const owner = await createAccount(server);
    // The tree's own BrainVision data file is an empty placeholder (a failure); its events go with an EDF.
    repo = makeRepo([{ from: 'mne-python/edf/test.edf', to: DATA, events: readFileSync(path.join(fixtures, EVENTS), 'utf8') }], ['bids/eeg_matchingpennies']);
    id = await convertedDataset(server, owner.user.id, repo);
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('answers every row with every column, onset and duration as numbers, and the sample at the group rate', async () => {
    const res = await apiFetch(server, `/datasets/${id}/events?path=${encodeURIComponent(DATA)}`);
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as { group: string; events: Array<Record<string, string | number | null>> };
    const lines = readFileSync(path.join(fixtures, EVENTS), 'utf8').trim().split('\n');
    const header = lines[0]!.split('\t');
    const rows = lines.slice(1).map((l) => Object.fromEntries(l.split('\t').map((v, i) => [header[i], v])));
    assert.equal(body.events.length, rows.length);
    const rate = Number(/_(\d+)hz$/.exec(body.group)![1]);
    rows.forEach((row, i) => {
      const event = body.events[i]!;
      assert.equal(event.onset, Number(row.onset));
      assert.equal(event.trial_type, row.trial_type);
      assert.equal(event.value, row.value);
      assert.equal(event.response_time, row.response_time);
      assert.equal(event.stim_file, row.stim_file);
      assert.equal(event.tsv_sample, row.sample);
      assert.equal(event.sample, Math.round(Number(row.onset) * rate));
    });
    const csv = await apiFetch(server, `/datasets/${id}/events?path=${encodeURIComponent(DATA)}&format=csv`);
    assert.match(csv.headers.get('content-type')!, /^text\/csv/);
    const csvLines = (await csv.text()).trim().split('\n');
    assert.equal(csvLines.length, rows.length + 1);
    assert.ok(csvLines[0]!.startsWith('onset,duration,sample,trial_type,value,'));
  });

  it('GET /datasets/:id/recordings names the recording that failed, with its code and reason', async () => {
    const body = (await (await apiFetch(server, `/datasets/${id}/recordings`)).json()) as { recordings: unknown[]; failures: Array<{ path: string; zarr: string; code: string; reason: string }> };
    assert.equal(body.recordings.length, 1);
    assert.deepEqual(body.failures.map((f) => [f.path, f.code]), [['sub-05/eeg/sub-05_task-matchingpennies_eeg.vhdr', 'empty_recording']]);
    assert.match(body.failures[0]!.reason, /empty/);
  });

  it('counts trial types in the catalogue and filters by event_type', async () => {
    const res = await apiFetch(server, `/recordings?dataset=${id}&event_type=${encodeURIComponent('raised-left/match-true')}`);
    const { recordings } = (await res.json()) as { recordings: Array<{ events: { n_events: number; counts: Record<string, number> } }> };
    assert.equal(recordings.length, 1);
    assert.ok(recordings[0]!.events.counts['raised-left/match-true']! > 0);
    assert.equal(Object.values(recordings[0]!.events.counts).reduce((a, b) => a + b, 0), recordings[0]!.events.n_events);
  });
});
