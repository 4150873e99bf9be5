import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { normalizeQuery, tsqueryText } from '../../src/datasets/search-query.js';
import { recordingFacts } from '../../src/datasets/search-fields.js';
import { embedStaleDatasets } from '../../src/datasets/search-embeddings.js';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { usingPostgres, startTestServer, type TestServer } from '../support/test-server.js';

const TOKEN = 'zarr-ready-token-0123456789';

/** A Zarr index.json as the converter writes it (CONTRACT §4), with the facts search cares about. */
function zarrIndex(id: string, stores: Array<{ path: string; modality: string; rate: number; n_channels: number; trial_types?: string[] }>) {
  return {
    format: 'nds-zarr-index',
    format_version: 1,
    dataset_id: id,
    source_commit: 'a'.repeat(40),
    store_count: stores.length,
    failure_count: 0,
    discovered_count: stores.length,
    stores: stores.map((s) => ({
      path: s.path,
      zarr: s.path.replace(/\.[a-z]+$/, '.zarr'),
      updated_utc: new Date().toISOString(),
      modalities: [s.modality],
      groups: [{ name: `${s.modality}_${s.rate}hz`, modality: s.modality, rate: s.rate, n_channels: s.n_channels, n_samples: 1000, duration_s: 1000 / s.rate, chunk_samples: 1024 }],
      n_events: 0,
      trial_types: s.trial_types ?? [],
    })),
    failures: [],
  };
}

/**
 * A local OpenAI-compatible embeddings server (the network edge): each text becomes a bag-of-words vector
 * over hashed buckets, so texts sharing words are close. Deterministic; counts its calls.
 */
function embeddingsServer(): Promise<{ server: Server; url: string; calls: string[][]; fail: { now: boolean } }> {
  const calls: string[][] = [];
  const fail = { now: false };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (fail.now || req.url !== '/v1/embeddings' || req.headers.authorization !== 'Bearer emb-key') {
        res.writeHead(fail.now ? 503 : 401).end('{}');
        return;
      }
      const { input, model } = JSON.parse(body) as { input: string[]; model: string };
      assert.equal(model, 'test-embed');
      calls.push(input);
      const data = input.map((text, index) => {
        const v = new Array(64).fill(0);
        for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) v[createHash('sha256').update(w).digest()[0] % 64] += 1;
        return { object: 'embedding', index, embedding: v };
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data, model }));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`, calls, fail })));
}

describe('dataset search', () => {
  let server: TestServer;
  let admin: TestAccount;
  let member: TestAccount;
  let emb: Awaited<ReturnType<typeof embeddingsServer>>;
  const ids: Record<string, string> = {};

  async function create(who: TestAccount, body: Record<string, unknown>): Promise<string> {
    const res = await who.api('/datasets', { method: 'POST', body: JSON.stringify(body) });
    assert.equal(res.status, 201, await res.clone().text());
    return ((await res.json()) as { id: string }).id;
  }

  async function converted(id: string, index: unknown) {
    await server.deps.objects.put(`${id}/zarr/index.json`, JSON.stringify(index));
    const res = await fetch(`${server.url}/webhooks/zarr-ready`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-token': TOKEN },
      body: JSON.stringify({ dataset_id: id, status: 'ready', commit: 'a'.repeat(40), store_count: 1, index_etag: '"x"', converted: [], removed: [], failure_count: 0 }),
    });
    assert.equal(res.status, 200, await res.clone().text());
  }

  async function search(query: string, key?: string) {
    const res = await apiFetch(server, `/datasets/search?${query}`, key);
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as {
      mode_used: string;
      fallback_reason: string | null;
      vector_backend: string | null;
      total: number;
      results: Array<{ id: string; name: string; score: number; sampling_rates: number[]; channel_counts: number[]; tasks: string[] }>;
      facets: Record<string, Array<{ value: string; count: number }>>;
    };
  }

  before(async () => {
    emb = await embeddingsServer();
    server = await startTestServer({ env: { SERVICE_WEBHOOK_TOKEN: TOKEN, EMBEDDINGS_URL: emb.url, EMBEDDINGS_API_KEY: 'emb-key', EMBEDDINGS_MODEL: 'test-embed', EMBEDDINGS_REFRESH_S: '86400' } });
    admin = await createAccount(server, { role: 'admin' });
    member = await createAccount(server);
    ids.sleep = await create(admin, {
      name: 'Sleep EEG',
      visibility: 'public',
      description: 'Overnight polysomnography with spindles scored by two raters.',
      authors: ['Ada Lovelace', 'Hans Berger'],
      keywords: ['sleep'],
    });
    ids.motor = await create(admin, {
      name: 'Motor imagery EMG and EEG',
      visibility: 'public',
      description: 'Forearm EMG while imagining grasping; also mentions sleep once.',
      authors: ['Grace Hopper'],
    });
    ids.sleepStudy = await create(admin, { name: 'Sleep EEG study of shift workers', visibility: 'public', description: 'Sleep sleep sleep EEG EEG in shift workers.', keywords: ['sleep', 'eeg'] });
    ids.secret = await create(member, { name: 'Secret sleep pilot', description: 'Unpublished spindles pilot with 500 Hz EEG.' });
    await converted(ids.sleep, zarrIndex(ids.sleep, [
      { path: 'sub-01/eeg/sub-01_task-nap_eeg.edf', modality: 'eeg', rate: 500, n_channels: 64, trial_types: ['spindle'] },
      { path: 'sub-02/eeg/sub-02_task-nap_eeg.edf', modality: 'eeg', rate: 500, n_channels: 64 },
    ]));
    await converted(ids.motor, zarrIndex(ids.motor, [
      { path: 'sub-01/emg/sub-01_task-holdWeight_emg.bdf', modality: 'emg', rate: 2048, n_channels: 8 },
      { path: 'sub-01/eeg/sub-01_task-holdWeight_eeg.bdf', modality: 'eeg', rate: 1000, n_channels: 32 },
    ]));
    await converted(ids.secret, zarrIndex(ids.secret, [{ path: 'sub-01/eeg/sub-01_task-nap_eeg.edf', modality: 'eeg', rate: 500, n_channels: 64 }]));
  });
  after(async () => {
    await server?.close();
    emb?.server.close();
  });

  it('normalizes rates and channel counts the way the index stores them', () => {
    assert.equal(normalizeQuery('EEG at 500 Hz'), 'eeg at 500hz');
    assert.equal(normalizeQuery('2.048 kHz, 64 channels'), '2048hz, 64ch');
    assert.equal(tsqueryText("500hz & 'x' | !y"), '500hz:* & x:* & y:*');
    assert.equal(tsqueryText('  '), '');
  });

  it('derives recording facts from index.json', async () => {
    const facts = recordingFacts(zarrIndex('nd000001', [
      { path: 'sub-01/eeg/sub-01_task-rest_eeg.edf', modality: 'eeg', rate: 256, n_channels: 19 },
      { path: 'sub-02/emg/sub-02_task-grip_emg.edf', modality: 'EMG', rate: 2000, n_channels: 4, trial_types: ['grip'] },
    ]));
    assert.deepEqual(facts.tasks, ['grip', 'rest']);
    assert.deepEqual(facts.modalities, ['eeg', 'emg']);
    assert.deepEqual(facts.sampling_rates, [256, 2000]);
    assert.deepEqual(facts.channel_counts, [4, 19]);
    assert.equal(facts.n_subjects, 2);
    assert.deepEqual(facts.trial_types, ['grip']);
    // A recording that failed (a 0-byte placeholder, as in the matching-pennies fixture) still names its
    // subject, task and datatype; it adds no rate and does not count as a recording.
    const withFailure = recordingFacts({
      ...zarrIndex('nd000001', [{ path: 'sub-01/eeg/sub-01_task-rest_eeg.edf', modality: 'eeg', rate: 256, n_channels: 19 }]),
      failures: [
        { path: 'sub-05/ieeg/sub-05_task-matchingpennies_ieeg.vhdr', zarr: 'sub-05/ieeg/sub-05_task-matchingpennies_ieeg.zarr', code: 'empty_recording', reason: '0 bytes' },
        { path: 42 },
      ],
    });
    assert.deepEqual(withFailure.tasks, ['matchingpennies', 'rest']);
    assert.deepEqual(withFailure.modalities, ['eeg', 'ieeg']);
    assert.deepEqual(withFailure.sampling_rates, [256]);
    assert.equal(withFailure.n_subjects, 2);
    assert.equal(withFailure.n_recordings, 1);
    const row = await server.deps.db.selectFrom('datasets').selectAll().where('id', '=', ids.sleep).executeTakeFirstOrThrow();
    assert.deepEqual(row.tasks, ['nap']);
    assert.deepEqual(row.sampling_rates, [500]);
    assert.equal(row.n_subjects, 2);
    assert.deepEqual((row.metadata as { recording?: { channel_counts: number[] } }).recording?.channel_counts, [64]);
  });

  it('finds a dataset by a word of its description', async () => {
    const r = await search('q=polysomnography');
    assert.deepEqual(r.results.map((d) => d.id), [ids.sleep]);
    assert.equal(r.mode_used, 'fulltext');
  });

  it('finds a dataset by an author, and by a prefix of a word', async () => {
    assert.deepEqual((await search('q=Berger')).results.map((d) => d.id), [ids.sleep]);
    assert.deepEqual((await search('q=hopp')).results.map((d) => d.id), [ids.motor]);
  });

  it('finds a dataset by a task name from its Zarr copy', async () => {
    assert.deepEqual((await search('q=holdWeight')).results.map((d) => d.id), [ids.motor]);
    const nap = await search('q=nap');
    assert.deepEqual(nap.results.map((d) => d.id), [ids.sleep]);
    assert.deepEqual(nap.results[0].tasks, ['nap']);
  });

  it('finds datasets by sampling rate and channel count, however they are written', async () => {
    for (const q of ['500 Hz', '500hz', '500 hz', '0.5 kHz']) {
      assert.deepEqual((await search(`q=${encodeURIComponent(q)}`)).results.map((d) => d.id), [ids.sleep], q);
    }
    assert.deepEqual((await search('q=64%20channels')).results.map((d) => d.id), [ids.sleep]);
    assert.deepEqual((await search('q=2048%20Hz%20emg')).results.map((d) => d.id), [ids.motor]);
    assert.deepEqual((await search('q=spindle')).results.map((d) => d.id).sort(), [ids.sleep].sort());
  });

  it('ranks an exact title match first, ahead of a text that repeats the words', async () => {
    const r = await search('q=sleep%20eeg');
    assert.equal(r.results[0].id, ids.sleep);
    assert.ok(r.results.some((d) => d.id === ids.sleepStudy));
    // Without the exact title, the repeated words win: ranking is real, not insertion order.
    const study = await search('q=sleep%20workers');
    assert.equal(study.results[0].id, ids.sleepStudy);
    assert.ok(r.results[1].score >= (r.results[2]?.score ?? 0));
  });

  it('never shows a private dataset to others, in hits, totals or facets; its owner finds it', async () => {
    const anon = await search('q=500hz');
    assert.deepEqual(anon.results.map((d) => d.id), [ids.sleep]);
    assert.equal(anon.total, 1);
    assert.deepEqual(anon.facets.sampling_rate, [{ value: '500', count: 1 }]);
    const other = await createAccount(server);
    assert.equal((await search('q=pilot', other.key)).total, 0);
    const own = await search('q=pilot', member.key);
    assert.deepEqual(own.results.map((d) => d.id), [ids.secret]);
  });

  it('filters by modality, sampling rate and subjects, and counts facets', async () => {
    const all = await search('q=');
    assert.equal(all.total, 3);
    assert.deepEqual(all.facets.modality, [{ value: 'eeg', count: 2 }, { value: 'emg', count: 1 }]);
    assert.deepEqual(all.facets.sampling_rate.map((f) => f.value), ['500', '1000', '2048']);
    assert.deepEqual(all.facets.min_subjects.find((f) => f.value === '1'), { value: '1', count: 2 });
    assert.deepEqual((await search('modality=emg')).results.map((d) => d.id), [ids.motor]);
    assert.deepEqual((await search('q=sleep&sampling_rate=500')).results.map((d) => d.id), [ids.sleep]);
    assert.deepEqual((await search('min_subjects=2')).results.map((d) => d.id), [ids.sleep]);
    const bad = await apiFetch(server, '/datasets/search?min_subjects=lots');
    assert.equal(bad.status, 400);
  });

  it('is not captured by GET /datasets/:id', async () => {
    const res = await apiFetch(server, '/datasets/search?q=sleep');
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(((await res.json()) as { results: unknown[] }).results));
  });

  it('ranks by embeddings in semantic mode; the background job embeds each dataset once until its text changes, a search only its query', async () => {
    // Decision 0023: nothing is embedded during a search; a dataset not embedded yet is not ranked.
    const unembedded = await search('q=overnight%20polysomnography%20spindles&mode=semantic');
    assert.equal(unembedded.mode_used, 'semantic');
    assert.deepEqual(unembedded.results, []);
    assert.deepEqual(emb.calls.flat(), ['overnight polysomnography spindles']);
    assert.ok((await embedStaleDatasets(server.deps)) >= 4);
    assert.equal(await embedStaleDatasets(server.deps), 0, 'every dataset embedded');
    const r = await search('q=overnight%20polysomnography%20spindles&mode=semantic');
    assert.equal(r.mode_used, 'semantic');
    assert.equal(r.fallback_reason, null);
    // Embedded PGlite ships pgvector; a PostgreSQL server uses it when the package is installed there, as
    // .ci/run does (TEST_PGVECTOR=required).
    const serverHasIt = process.env.TEST_PGVECTOR === 'required' || (await hasPgvector());
    assert.equal(r.vector_backend, usingPostgres && !serverHasIt ? 'sql' : 'pgvector');
    assert.equal(r.results[0].id, ids.sleep);
    assert.equal(r.total, 3);
    const embedded = emb.calls.flat().length;
    await search('q=forearm%20grasping&mode=semantic');
    assert.equal(emb.calls.flat().length, embedded + 1, 'only the query is embedded the second time');
    const again = await search('q=forearm%20grasping&mode=semantic');
    assert.equal(again.results[0].id, ids.motor);
    await admin.api(`/datasets/${ids.motor}`, { method: 'PATCH', body: JSON.stringify({ description: 'Completely new words about forearm muscles.' }) });
    const before = emb.calls.flat().length;
    await search('q=muscles&mode=semantic');
    assert.equal(emb.calls.flat().length, before + 1, 'a search embeds its query alone');
    assert.equal(await embedStaleDatasets(server.deps), 1, 'the job finds the changed dataset, and it alone');
    assert.equal(emb.calls.flat().length, before + 2);
    assert.match(emb.calls.flat().at(-1)!, /forearm muscles/);
    assert.equal((await search('q=forearm%20muscles&mode=semantic')).results[0]!.id, ids.motor);
  });

  it('says honestly when semantic mode falls back to full text', async () => {
    emb.fail.now = true;
    try {
      const r = await search('q=polysomnography&mode=semantic');
      assert.equal(r.mode_used, 'fulltext');
      assert.match(r.fallback_reason!, /^embeddings_unavailable/);
      assert.deepEqual(r.results.map((d) => d.id), [ids.sleep]);
    } finally {
      emb.fail.now = false;
    }
    const empty = await search('q=&mode=semantic');
    assert.equal(empty.mode_used, 'fulltext');
    assert.match(empty.fallback_reason!, /^empty_query/);
  });

  async function hasPgvector(): Promise<boolean> {
    const { sql } = await import('kysely');
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'vector'`.execute(server.deps.db);
    return rows[0].n > 0;
  }
});

describe('dataset search without an embeddings endpoint', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());

  it('falls back to full text and says why', async () => {
    const res = await apiFetch(server, '/datasets/search?q=anything&mode=semantic');
    const body = (await res.json()) as { mode_used: string; fallback_reason: string };
    assert.equal(body.mode_used, 'fulltext');
    assert.match(body.fallback_reason, /^embeddings_not_configured/);
  });
});
