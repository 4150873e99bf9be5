import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createAccount, apiFetch, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { backfillCatalogue } from '../../src/recordings/catalogue-sync.js';
import type { Database } from '../../src/db/types.js';
import { convertedDataset, makeRepo } from './support.js';

interface Item {
  dataset_id: string;
  path: string;
  zarr: string;
  store_url: string;
  source_commit: string;
  entities: Record<string, string | null>;
  groups: Array<{ name: string; rate: number; n_channels: number; channels: Array<{ label: string; type: string }> }>;
  events: { n_events: number; counts: Record<string, number> };
}

describe('the recording catalogue: GET /recordings and GET /datasets/:id/recordings', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let admin: TestAccount;
  let publicId: string;
  let privateId: string;
  const repos: string[] = [];

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server);
    stranger = await createAccount(server);
    admin = await createAccount(server, { role: 'admin' });
    const pub = makeRepo(
      [
        { from: 'mne-python/edf/test.edf', to: 'sub-01/eeg/sub-01_task-rest_run-1_eeg.edf', events: 'onset\tduration\ttrial_type\tvalue\n1.0\t0\tleft\t1\n2.0\t0\tright\t2\n3.0\t0\tleft\t1\n' },
        { from: 'mne-python/edf/test.bdf', to: 'sub-02/ses-a/eeg/sub-02_ses-a_task-motor_eeg.bdf' },
        { from: 'mne-python/edf/test_uneven_samp.edf', to: 'sub-03/eeg/sub-03_task-rest_eeg.edf' },
        { from: 'mne-python/edf/test_uneven_samp.edf', to: 'sub-04/eeg/sub-04_task-rest_eeg.edf' },
      ],
      [],
    );
    const priv = makeRepo([{ from: 'mne-python/edf/test.edf', to: 'sub-09/eeg/sub-09_task-secret_eeg.edf' }]);
    repos.push(pub, priv);
    publicId = await convertedDataset(server, owner.user.id, pub, 'public');
    privateId = await convertedDataset(server, owner.user.id, priv, 'private');
  });
  after(async () => {
    await server.close();
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  async function list(query: string, key?: string): Promise<Item[]> {
    const res = await apiFetch(server, `/recordings?${query}`, key);
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { recordings: Item[] }).recordings;
  }
  const paths = (items: Item[]) => items.map((i) => i.path).sort();

  it('lists every converted recording with its entities, groups, channels and event counts', async () => {
    const items = await list(`dataset=${publicId}`);
    assert.equal(items.length, 4);
    const first = items.find((i) => i.path === 'sub-01/eeg/sub-01_task-rest_run-1_eeg.edf')!;
    assert.equal(first.zarr, 'sub-01/eeg/sub-01_task-rest_run-1_eeg.zarr');
    assert.equal(first.store_url, `${server.config.zarrCacheBaseUrl}/${publicId}/zarr/${first.zarr}`);
    assert.match(first.source_commit, /^[0-9a-f]{40}$/);
    assert.deepEqual(first.entities, { subject: '01', session: null, task: 'rest', run: '1', acquisition: null, datatype: 'eeg' });
    assert.deepEqual(first.events, { n_events: 3, counts: { left: 2, right: 1 } });
    assert.ok(first.groups.length >= 1);
    assert.ok(first.groups[0]!.channels.length === first.groups[0]!.n_channels);
    const bdf = items.find((i) => i.path.endsWith('.bdf'))!;
    assert.deepEqual({ subject: bdf.entities.subject, session: bdf.entities.session, task: bdf.entities.task }, { subject: '02', session: 'a', task: 'motor' });
  });

  it('applies each filter', async () => {
    const all = await list(`dataset=${publicId}`);
    const edf = all.find((i) => i.path.startsWith('sub-01/'))!;
    const uneven = all.find((i) => i.path.startsWith('sub-03/'))!;
    const someRate = uneven.groups[0]!.rate;
    const label = edf.groups[0]!.channels[0]!.label;
    assert.deepEqual(paths(await list(`dataset=${publicId}&subject=02`)), ['sub-02/ses-a/eeg/sub-02_ses-a_task-motor_eeg.bdf']);
    assert.deepEqual(paths(await list(`dataset=${publicId}&session=a`)), ['sub-02/ses-a/eeg/sub-02_ses-a_task-motor_eeg.bdf']);
    assert.deepEqual(paths(await list(`dataset=${publicId}&task=motor`)), ['sub-02/ses-a/eeg/sub-02_ses-a_task-motor_eeg.bdf']);
    assert.deepEqual(paths(await list(`dataset=${publicId}&run=1`)), ['sub-01/eeg/sub-01_task-rest_run-1_eeg.edf']);
    assert.equal((await list(`dataset=${publicId}&datatype=eeg`)).length, 4);
    assert.equal((await list(`dataset=${publicId}&datatype=emg`)).length, 0);
    const atRate = await list(`dataset=${publicId}&rate=${someRate}`);
    assert.ok(atRate.every((i) => i.groups.some((g) => g.rate === someRate)) && atRate.length >= 2);
    assert.ok((await list(`dataset=${publicId}&rate_min=999999`)).length === 0);
    assert.equal((await list(`dataset=${publicId}&rate_min=0.001&rate_max=1000000`)).length, 4);
    const maxChannels = Math.max(...all.map((i) => i.groups.reduce((s, g) => s + g.n_channels, 0)));
    assert.ok((await list(`dataset=${publicId}&channels_min=${maxChannels}`)).length >= 1);
    assert.equal((await list(`dataset=${publicId}&channels_min=${maxChannels + 1}`)).length, 0);
    assert.equal((await list(`dataset=${publicId}&channels_max=0`)).length, 0);
    assert.equal((await list(`dataset=${publicId}&duration_min=0`)).length, 4);
    assert.equal((await list(`dataset=${publicId}&duration_max=0`)).length, 0);
    const withLabel = await list(`dataset=${publicId}&channel=${encodeURIComponent(label)}`);
    assert.ok(withLabel.some((i) => i.path === edf.path));
    assert.equal((await list(`dataset=${publicId}&channel=${encodeURIComponent(label)}&channel=NoSuchLabel`)).length, 0);
    assert.equal((await list(`dataset=${publicId}&channel_type=eeg`)).length, 4);
    assert.equal((await list(`dataset=${publicId}&channel_type=ECOG`)).length, 0);
    assert.deepEqual(paths(await list(`dataset=${publicId}&event_type=right`)), [edf.path]);
    assert.deepEqual(paths(await list(`dataset=${publicId}&q=motor`)), ['sub-02/ses-a/eeg/sub-02_ses-a_task-motor_eeg.bdf']);
    assert.equal((await list(`dataset=${publicId}&q=nothing-like-this`)).length, 0);
  });

  // Decision 0023: the words' fence holds terms split at `/`, `_`, `.` and `-`; a query word holding those
  // characters is fenced by its parts and still matched whole against each row.
  it('finds recordings by a q word that spans path separators, across datasets, and only those', async () => {
    const bdf = ['sub-02/ses-a/eeg/sub-02_ses-a_task-motor_eeg.bdf'];
    assert.deepEqual(paths(await list('q=sub-02_ses-a')), bdf);
    assert.deepEqual(paths(await list('q=task-motor_eeg.bdf')), bdf);
    assert.deepEqual(paths(await list('q=ses-a/eeg')), bdf);
    assert.deepEqual(paths(await list('q=02/ses-a/EEG/sub')), bdf);
    assert.deepEqual(paths(await list('q=rest_run-1_eeg.edf')), ['sub-01/eeg/sub-01_task-rest_run-1_eeg.edf']);
    // Every part is in the fence of the dataset, but no recording holds the word whole.
    assert.deepEqual(await list('q=sub-02_task-rest'), []);
    assert.deepEqual(await list(`q=${publicId}%20motor-rest`), []);
    assert.deepEqual(paths(await list('q=sub-03_task-rest%20motor')), []);
    assert.deepEqual(paths(await list('q=sub-03_task-rest%20rest')), ['sub-03/eeg/sub-03_task-rest_eeg.edf']);
  });

  it('pages with a cursor, every recording once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await apiFetch(server, `/recordings?dataset=${publicId}&limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      const page = (await res.json()) as { recordings: Item[]; next_cursor: string | null };
      seen.push(...page.recordings.map((r) => r.path));
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 2);
    assert.deepEqual([...seen].sort(), paths(await list(`dataset=${publicId}`)));
    assert.equal(new Set(seen).size, 4);
    const bad = await apiFetch(server, '/recordings?cursor=not-a-cursor');
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: string }).error, 'validation_failed');
    assert.equal((await apiFetch(server, '/recordings?rate=-1')).status, 400);
  });

  it('shows private recordings to their owner and admins only', async () => {
    const anonymous = await list('task=secret');
    assert.equal(anonymous.length, 0);
    assert.equal((await list('task=secret', stranger.key)).length, 0);
    assert.equal((await list('task=secret', owner.key)).length, 1);
    assert.equal((await list('task=secret', admin.key)).length, 1);
    assert.equal((await apiFetch(server, `/datasets/${privateId}/recordings`)).status, 404);
    assert.equal((await apiFetch(server, `/datasets/${privateId}/recordings`, stranger.key)).status, 404);
    const mine = await apiFetch(server, `/datasets/${privateId}/recordings`, owner.key);
    assert.equal(mine.status, 200);
    assert.equal(((await mine.json()) as { recordings: Item[] }).recordings.length, 1);
  });

  // Decision 0023: every filter first picks candidate datasets through the fences, then walks their rows;
  // visibility is part of the candidates, so each filter's shape is tried with the private recording's values.
  it('never shows a stranger a private recording through any filter, alone or combined, on any page', async () => {
    const [secret] = await list(`dataset=${privateId}`, owner.key);
    assert.ok(secret, 'the owner sees the private recording');
    const group = secret.groups[0]!;
    const label = encodeURIComponent(group.channels[0]!.label);
    const queries = [
      '',
      `dataset=${privateId}`,
      'subject=09',
      'task=secret',
      'datatype=eeg',
      `q=${privateId}`,
      'q=secret',
      'q=sub-09_task-secret',
      'q=task-secret_eeg.edf',
      'q=09/eeg/sub',
      `q=${label}`,
      `channel=${label}`,
      `channel_type=${group.channels[0]!.type}`,
      `rate=${group.rate}`,
      `rate_min=${group.rate}`,
      `rate_max=${group.rate}`,
      `channels_min=${group.n_channels}`,
      `channels_max=${group.n_channels}`,
      'duration_min=0',
      'duration_max=100000',
      'subject=09&task=secret',
      `task=secret&channel=${label}`,
      `q=secret&rate=${group.rate}`,
      `dataset=${privateId}&q=secret`,
    ];
    for (const query of queries) {
      assert.ok((await list(query, owner.key)).some((i) => i.dataset_id === privateId) || query === '', `the owner finds it by ${query}`);
      assert.ok((await list(query, admin.key)).some((i) => i.dataset_id === privateId) || query === '', `an admin finds it by ${query}`);
      for (const [who, key] of [['anonymous', undefined], ['a stranger', stranger.key]] as const) {
        const seen = await list(query, key);
        assert.deepEqual(seen.filter((i) => i.dataset_id === privateId), [], `${who} sees nothing private by ${query}`);
      }
    }
    // Page by page (one recording a page), the cursor walks past the private dataset's rows without showing one.
    for (const key of [undefined, stranger.key]) {
      let cursor: string | null = null;
      do {
        const res = await apiFetch(server, `/recordings?limit=1${cursor ? `&cursor=${cursor}` : ''}`, key);
        const page = (await res.json()) as { recordings: Item[]; next_cursor: string | null };
        assert.ok(page.recordings.every((i) => i.dataset_id !== privateId));
        cursor = page.next_cursor;
      } while (cursor);
    }
    for (const query of ['subject=09', 'task=secret', `rate=${group.rate}`, 'q=secret']) {
      for (const key of [undefined, stranger.key]) {
        const res = await apiFetch(server, `/datasets/search?${query}`, key);
        const ids = ((await res.json()) as { results: Array<{ id: string }> }).results.map((r) => r.id);
        assert.ok(!ids.includes(privateId), `dataset search by ${query}`);
      }
    }
  });

  it('GET /datasets/:id/recordings lists one dataset with its failures', async () => {
    const res = await apiFetch(server, `/datasets/${publicId}/recordings`);
    const body = (await res.json()) as { recordings: Item[]; failures: unknown[] };
    assert.equal(body.recordings.length, 4);
    assert.deepEqual(body.failures, []);
  });

  it('GET /datasets/search honours task, subject and rate filters', async () => {
    const ids = async (query: string) => {
      const res = await apiFetch(server, `/datasets/search?${query}`, owner.key);
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as { results: Array<{ id: string }> }).results.map((r) => r.id).sort();
    };
    assert.deepEqual(await ids('task=motor'), [publicId]);
    assert.deepEqual(await ids('task=secret'), [privateId]);
    assert.deepEqual(await ids('task=nothing'), []);
    assert.deepEqual(await ids('subject=02'), [publicId]);
    assert.deepEqual(await ids('subject=09'), [privateId]);
    assert.deepEqual(await ids('subject=77'), []);
    assert.deepEqual(await ids('rate_min=1&rate_max=100000'), [publicId, privateId].sort());
    assert.deepEqual(await ids('rate_min=100000'), []);
    // `rate` as GET /recordings takes it: the datasets with a recording at exactly that rate (it was once ignored).
    const recordings = await list('', owner.key);
    const rates = [...new Set(recordings.flatMap((r) => r.groups.map((g) => g.rate)))];
    assert.ok(rates.length >= 2, `rates ${rates}`);
    for (const rate of rates) {
      const expected = [...new Set(recordings.filter((r) => r.groups.some((g) => g.rate === rate)).map((r) => r.dataset_id))].sort();
      assert.deepEqual(await ids(`rate=${rate}`), expected, `rate=${rate}`);
      assert.deepEqual(await ids(`rate=${rate}&sampling_rate=${rate}`), expected);
    }
    assert.deepEqual(await ids('rate=1.5'), []);
    const conflicting = await apiFetch(server, `/datasets/search?rate=${rates[0]}&sampling_rate=${rates[1]}`);
    assert.equal(conflicting.status, 400);
    const strangers = await apiFetch(server, '/datasets/search?subject=09', stranger.key);
    assert.deepEqual(((await strangers.json()) as { results: unknown[] }).results, []);
  });

  it('backfills copies converted before the catalogue existed, and drops rows with the dataset', async () => {
    await server.deps.db.deleteFrom('recordings').where('dataset_id', '=', publicId).execute();
    assert.equal((await list(`dataset=${publicId}`)).length, 0);
    assert.equal(await backfillCatalogue(server.deps), 1);
    assert.equal((await list(`dataset=${publicId}`)).length, 4);
    const del = await apiFetch(server, `/admin/datasets/${privateId}`, admin.key, { method: 'DELETE' });
    assert.equal(del.status, 200);
    const left = await server.deps.db.selectFrom('recordings').select('zarr').where('dataset_id', '=', privateId).execute();
    assert.deepEqual(left, []);
  });

  it('backfills nothing, and logs why, when the database cannot list the copies (it runs unawaited at startup)', async () => {
    // A rejection nobody awaits ends the process: a database too busy at startup must not take nds serve down.
    const unreachable = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: 'postgres://nds@127.0.0.1:1/none' }) }) });
    const warned: string[] = [];
    const log = { ...server.deps.log, warn: (_: unknown, message: string) => void warned.push(message) } as unknown as typeof server.deps.log;
    try {
      assert.equal(await backfillCatalogue({ ...server.deps, db: unreachable, log }), 0);
    } finally {
      await unreachable.destroy();
    }
    assert.deepEqual(warned, ['recording catalogue backfill could not list the copies; the next start tries again']);
  });
});
