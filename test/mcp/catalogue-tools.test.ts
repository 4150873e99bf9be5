/**
 * `get_dataset` (and the resource `nds://datasets/{id}`) answers a bounded list: its answer goes whole into an
 * agent's context, and a dataset may hold thousands of recordings (docs/security.md: list sizes are bounded).
 * It lists the first recordings and failures, says how many there are, and where the rest are.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { replaceRecordings, type NewRecording } from '../../src/recordings/catalogue-queries.js';
import { buildStoreIndex } from '../../src/formats/zarr/store-index.js';
import { writeStoreIndex } from '../../src/formats/zarr/store-index-object.js';
import { DATASET_LISTED } from '../../src/mcp/catalogue-tools.js';
import { call, httpClient } from './support.js';

const MANY = 'nd000901';
const EXACT = 'nd000902';
const ROWS = 120;
const FAILED = 70;

const pathOf = (i: number) => `sub-${String(i).padStart(5, '0')}/eeg/sub-${String(i).padStart(5, '0')}_task-rest_eeg.edf`;

/** `n` one-minute recordings of one channel, subjects 00000, 00001... */
function rows(n: number): NewRecording[] {
  return Array.from({ length: n }, (_, i) => {
    const path = pathOf(i);
    return {
      zarr: path.replace(/\.edf$/, '.zarr'),
      path,
      source_commit: null,
      subject: String(i).padStart(5, '0'),
      session: null,
      task: 'rest',
      run: null,
      acquisition: null,
      datatype: 'eeg',
      duration_s: 60,
      n_channels: 1,
      rates: [256],
      channel_labels: ['Cz'],
      channel_types: ['EEG'],
      trial_types: [],
      groups: JSON.stringify([{ name: 'eeg', modality: 'eeg', rate: 256, n_channels: 1, n_samples: 15360, duration_s: 60, channels: [{ label: 'Cz', type: 'EEG', unit: 'uV', status: 'good' }] }]) as never,
      events: JSON.stringify({ n_events: 0, trial_types: {} }) as never,
      search_text: `${path} rest Cz`,
    };
  });
}

type Item = { path: string };
type DatasetAnswer = {
  recordings: { count: number; subjects: number | null; hours: number | null; items: Item[]; next_cursor: string | null };
  failures: Array<{ path: string }>;
  failure_count: number;
};

describe('get_dataset of a dataset with many recordings', () => {
  let server: TestServer;
  let client: Client;

  before(async () => {
    server = await startTestServer();
    const owner = await createAccount(server);
    await insertDatasetRows(server.deps.db, [
      { id: MANY, name: 'many', owner_id: owner.user.id, n_subjects: ROWS, metadata: JSON.stringify({ recording: { n_recordings: ROWS, duration_s: ROWS * 60 } }) as never },
      { id: EXACT, name: 'exactly a page', owner_id: owner.user.id },
    ]);
    for (const [id, n] of [[MANY, ROWS], [EXACT, DATASET_LISTED]] as const) {
      const made = rows(n);
      await replaceRecordings(server.deps.db, id, { rows: made, keep: made.map((r) => r.zarr), unchanged: [], sourceCommit: null }, new Date());
    }
    const failures = Array.from({ length: FAILED }, (_, i) => ({ path: `sub-9${String(i).padStart(4, '0')}/eeg/bad_eeg.edf`, zarr: `sub-9${i}.zarr`, code: 'unsupported_format' as const, reason: 'not a format nds reads' }));
    await writeStoreIndex(server.deps.objects, MANY, buildStoreIndex({ datasetId: MANY, contractBase: null, dataBase: null, sourceCommit: null, stores: [], failures }));
    client = await httpClient(server);
  });
  after(async () => {
    await client?.close();
    await server.close();
  });

  it('lists the first recordings and failures, with how many there are', async () => {
    const { structured } = await call<DatasetAnswer>(client, 'get_dataset', { dataset_id: MANY });
    assert.equal(DATASET_LISTED, 50);
    assert.deepEqual(structured.recordings.items.map((r) => r.path), Array.from({ length: DATASET_LISTED }, (_, i) => pathOf(i)));
    assert.equal(structured.recordings.count, ROWS);
    assert.equal(structured.recordings.subjects, ROWS);
    assert.equal(structured.recordings.hours, 2);
    assert.equal(structured.failures.length, DATASET_LISTED);
    assert.equal(structured.failure_count, FAILED);
  });

  it('gives a cursor with which list_recordings answers the rest, each recording once', async () => {
    const first = await call<DatasetAnswer>(client, 'get_dataset', { dataset_id: MANY });
    const cursor = first.structured.recordings.next_cursor;
    assert.ok(cursor, 'a next_cursor');
    const rest = await call<{ recordings: Item[]; next_cursor: string | null }>(client, 'list_recordings', { dataset: MANY, cursor, limit: 200 });
    assert.equal(rest.structured.next_cursor, null);
    const all = [...first.structured.recordings.items, ...rest.structured.recordings].map((r) => r.path);
    assert.deepEqual(all, Array.from({ length: ROWS }, (_, i) => pathOf(i)));
  });

  it('answers no cursor for a dataset that fits, and its count', async () => {
    const { structured } = await call<DatasetAnswer>(client, 'get_dataset', { dataset_id: EXACT });
    assert.equal(structured.recordings.items.length, DATASET_LISTED);
    assert.equal(structured.recordings.count, DATASET_LISTED);
    assert.equal(structured.recordings.next_cursor, null);
    assert.deepEqual(structured.failures, []);
    assert.equal(structured.failure_count, 0);
  });

  it('bounds the resource nds://datasets/{id} the same way', async () => {
    const read = await client.readResource({ uri: `nds://datasets/${MANY}` });
    const body = JSON.parse((read.contents[0] as { text: string }).text) as DatasetAnswer;
    assert.equal(body.recordings.items.length, DATASET_LISTED);
    assert.equal(body.recordings.count, ROWS);
    assert.ok(body.recordings.next_cursor);
  });

  it("says in the tool's description how many recordings it lists and how to get the rest", async () => {
    const { tools } = await client.listTools();
    const description = tools.find((t) => t.name === 'get_dataset')!.description ?? '';
    assert.match(description, new RegExp(`first ${DATASET_LISTED}\\b`));
    assert.match(description, /list_recordings/);
    assert.match(description, /next_cursor/);
  });
});
