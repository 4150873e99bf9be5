/**
 * The catalogue and the dataset search at archive scale (issue 24, decision 0023): fills a PostgreSQL
 * database through the migrations with 10,000 datasets (80 % public) and 1,000,000 recordings (100 a
 * dataset, 19-64 channel labels each) by SQL, then times every filter of `GET /recordings` and of
 * `GET /datasets/search` as the services build them (`listRecordings`, `searchDatasets`), alone and two
 * combined, selective, common and matching nothing: p50 and p95 of the first page and of the page after
 * it, anonymous and signed in. Goal: first page p95 ≤ 50 ms, the next ≤ 100 ms. The baseline, in the same
 * run, is the query shape before decision 0023 (one run each, 10 s cap). EXPLAIN ANALYZE of each query of
 * the anonymous first page goes to `--explain <file>`.
 *
 * Run: node --import tsx bench/scale.ts [--url postgres://postgres@127.0.0.1:5432/nds_scale]
 *        [--datasets 10000] [--per-dataset 100] [--runs 20] [--refill] [--fill-only] [--explain /tmp/scale-explain.txt]
 *        [--only <regular expression of "route: filter", e.g. "recordings: q=">] [--no-baseline]
 * The database is created when missing and filled once; a later run reuses it unless --refill. Then semantic
 * search at 10,000 datasets (`bench/scale-semantic.ts`, in `<database>_semantic` and in PGlite) unless --no-semantic.
 */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Kysely, PostgresDialect, sql, type LogEvent } from 'kysely';
import pg from 'pg';
import type { Config } from '../src/core/config.js';
import { createLogger } from '../src/core/log.js';
import type { User } from '../src/db/accounts-tables.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Database } from '../src/db/types.js';
import { searchDatasets } from '../src/datasets/search.js';
import type { SearchInput } from '../src/datasets/search-filters.js';
import { listRecordings } from '../src/recordings/catalogue.js';
import type { RecordingFilters } from '../src/client/index.js';
import { benchSemantic } from './scale-semantic.js';
import { args, option } from './bench-args.js';

const url = option('url', 'postgres://postgres@127.0.0.1:5432/nds_scale');
const nDatasets = Number(option('datasets', '10000'));
const perDataset = Number(option('per-dataset', '100'));
const runs = Number(option('runs', '20'));
const refill = args.includes('--refill');
const explainFile = option('explain', '');
const fillOnly = args.includes('--fill-only');
const only = new RegExp(option('only', ''));

const GOAL_FIRST_MS = 50;
const GOAL_LATER_MS = 100;

async function adminQuery(text: string): Promise<pg.QueryResult> {
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

const dbName = new URL(url).pathname.slice(1);
if (!/^[a-z_][a-z0-9_]*$/.test(dbName) || dbName === 'test' || dbName === 'postgres') throw new Error(`refusing to fill database ${dbName}: name a bench database of its own`);
if (refill) await adminQuery(`drop database if exists ${dbName} with (force)`);
if ((await adminQuery(`select 1 from pg_database where datname = '${dbName}'`)).rowCount === 0) await adminQuery(`create database ${dbName}`);

const logged: LogEvent[] = [];
const pool = new pg.Pool({ connectionString: url, max: 4 });
const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (event) => void logged.push(event) });
await migrateToLatest(db);

const have = await sql<{ n: number }>`select count(*)::int as n from recordings`.execute(db);
const want = nDatasets * perDataset;
if (have.rows[0]!.n !== want) await fill();
if (fillOnly) {
  await db.destroy();
  process.exit(0);
}

async function fill(): Promise<void> {
  const client = await pool.connect();
  const step = async (name: string, text: string) => {
    const t0 = performance.now();
    await client.query(text);
    console.log(`fill: ${name} ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };
  try {
    await client.query('set statement_timeout = 0');
    await step('truncate', 'truncate recordings, recording_facets, recording_words, recording_terms, dataset_embeddings, datasets, users restart identity cascade');
    await step('users', `insert into users (username, email, status) select 'bench' || u, 'bench' || u || '@example.org', 'approved' from generate_series(1, 100) u`);
    // One row of attributes a dataset; recordings then repeat their dataset's montage, rate and tasks.
    await step(
      'dataset attributes',
      `create temporary table bench_ds as
       with pool as (select array['Fp1','Fp2','F7','F3','Fz','F4','F8','T7','C3','Cz','C4','T8','P7','P3','Pz','P4','P8','O1','O2',
         'AF7','AF3','AFz','AF4','AF8','F5','F1','F2','F6','FT9','FT7','FC5','FC3','FC1','FCz','FC2','FC4','FC6','FT8','FT10',
         'C5','C1','C2','C6','TP9','TP7','CP5','CP3','CP1','CPz','CP2','CP4','CP6','TP8','TP10','P5','P1','P2','P6','PO7','PO3','POz','PO4','PO8','Oz'] as labels)
       select i, 'nd' || lpad(i::text, 6, '0') as id,
         case when i % 10 = 9 then 'ieeg' when i % 10 = 8 then 'emg' else 'eeg' end as modality,
         case when i % 1000 = 0 then 8192 else (array[250,256,500,512,1000,1024,2000,2048,5000,20000])[1 + (i * 7) % 10] end::float8 as rate,
         pool.labels[1:19 + i % 46] || case when i % 100 = 0 then array['Ch' || (i / 100)] else '{}'::text[] end as labels,
         case when i % 10 = 9 then array['SEEG','ECOG'] when i % 10 = 8 then array['EMG'] else array['EEG','EOG'] end
           || case when i % 97 = 0 then array['ECG'] else '{}'::text[] end as types,
         array['rest', (array['motor','oddball','nback','sleep','grasp','visual','memory'])[1 + i % 7]] as tasks,
         5 + i % 20 as nsub,
         case when i % 250 = 0 then 'p' else '' end as subject_prefix,
         array['left','right'] || case when i % 3 = 0 then array['stim'] else '{}'::text[] end as events
       from generate_series(1, ${nDatasets}) i, pool`,
    );
    await step(
      'datasets',
      `insert into datasets (id, name, description, owner_id, visibility, keywords, modalities, tasks, n_subjects, sampling_rates, channel_counts, zarr_status, zarr_source_commit)
       select id, 'Study ' || i || ': ' || tasks[2] || ' ' || modality,
         'Recordings of ' || nsub || ' people during ' || tasks[2] || ' and rest, ' || modality || ' at ' || rate || ' Hz.',
         1 + i % 100, case when i % 5 = 0 then 'private' else 'public' end,
         array[tasks[2], modality], array[modality], tasks, nsub, array[rate], array[cardinality(labels)], 'ready', 'c0ffee'
       from bench_ds`,
    );
    await step(
      'recordings',
      `insert into recordings (dataset_id, zarr, path, source_commit, subject, session, task, run, acquisition, datatype, duration_s,
         n_channels, rates, channel_labels, channel_types, trial_types, groups, events, search_text, updated_at)
       select ds.id, r.stem || '.zarr', r.stem || '.edf', 'c0ffee', r.subject, r.session, r.task, r.run, null, ds.modality,
         60 + (ds.i * r.j) % 3600, cardinality(ds.labels), array[ds.rate], ds.labels, ds.types, r.events,
         g.groups, jsonb_build_object('n_events', 10 * cardinality(r.events), 'counts', '{}'::jsonb),
         ds.id || ' ' || r.stem || '.edf ' || r.task || ' ' || array_to_string(ds.labels, ' ') || ' ' || array_to_string(ds.types, ' ') || ' ' || array_to_string(r.events, ' '),
         now()
       from bench_ds ds
       cross join lateral (select jsonb_build_array(jsonb_build_object('name', ds.modality, 'modality', ds.modality, 'rate', ds.rate,
           'n_channels', cardinality(ds.labels), 'n_samples', 600 * ds.rate, 'duration_s', 600,
           'channels', (select jsonb_agg(jsonb_build_object('label', l, 'type', ds.types[1], 'unit', 'uV', 'status', 'good')) from unnest(ds.labels) l))) as groups) g
       cross join lateral (
         select j, s.subject, s.session, s.task, j::text as run, s.events,
           'sub-' || s.subject || '/' || coalesce('ses-' || s.session || '/', '') || ds.modality || '/sub-' || s.subject || coalesce('_ses-' || s.session, '')
             || '_task-' || s.task || '_run-' || j || '_' || ds.modality as stem
         from generate_series(1, ${perDataset}) j
         cross join lateral (select ds.subject_prefix || lpad((1 + (j - 1) % ds.nsub)::text, 2, '0') as subject,
           case when ds.i % 2 = 0 then (array['a','b'])[1 + j % 2] end as session,
           ds.tasks[1 + j % 2] as task,
           ds.events || case when ds.i % 500 = 0 and j % 10 = 0 then array['seizure'] else '{}'::text[] end as events) s
       ) r`,
    );
    // The fences, a batch of datasets at a time (one call for all would hash every label of every row at once).
    const t0 = performance.now();
    for (let i = 1; i <= nDatasets; i += 500) {
      await client.query(`select refresh_recording_fences(array(select id from bench_ds where i between ${i} and ${i + 499}))`);
    }
    console.log(`fill: fences ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    // Vacuumed as autovacuum would leave it: the visibility map lets the fences' indexes answer alone.
    await step('vacuum analyze', 'vacuum analyze');
  } finally {
    client.release();
  }
}

const config = { zarrCacheBaseUrl: 'http://bench/zarr', embeddingsUrl: undefined, embeddingsModel: 'bench' } as unknown as Config;
const log = createLogger('error');
const member = (await sql<User>`select * from users where id = 7`.execute(db)).rows[0]!;
const callers: Array<[string, User | undefined]> = [
  ['anonymous', undefined],
  ['signed in', member],
];

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => x.toFixed(1);

interface Case {
  route: 'recordings' | 'search';
  name: string;
  filters: RecordingFilters | Partial<SearchInput>;
}

const cases: Case[] = [
  { route: 'recordings', name: 'no filter', filters: {} },
  { route: 'recordings', name: 'dataset=nd004242', filters: { dataset: 'nd004242' } },
  { route: 'recordings', name: 'q=zzzzqx (nothing)', filters: { q: 'zzzzqx' } },
  { route: 'recordings', name: 'q=nd004242 (100 recordings)', filters: { q: 'nd004242' } },
  { route: 'recordings', name: 'q=oddball (1 in 7)', filters: { q: 'oddball' } },
  { route: 'recordings', name: 'q=Cz (2 letters, every recording)', filters: { q: 'Cz' } },
  { route: 'recordings', name: 'q="rest Cz" (words of every dataset)', filters: { q: 'rest Cz' } },
  { route: 'recordings', name: 'q=sub-p03_task-rest (path, 40 datasets)', filters: { q: 'sub-p03_task-rest' } },
  { route: 'recordings', name: 'rate=4096 (nothing)', filters: { rate: 4096 } },
  { route: 'recordings', name: 'rate=8192 (10 datasets)', filters: { rate: 8192 } },
  { route: 'recordings', name: 'rate=500 (1 in 10)', filters: { rate: 500 } },
  { route: 'recordings', name: 'rate_min=6000 (1 in 10)', filters: { rate_min: 6000 } },
  { route: 'recordings', name: 'rate_max=256 (2 in 10)', filters: { rate_max: 256 } },
  { route: 'recordings', name: 'channel=Ch999 (nothing)', filters: { channel: ['Ch999'] } },
  { route: 'recordings', name: 'channel=Ch7 (1 dataset)', filters: { channel: ['Ch7'] } },
  { route: 'recordings', name: 'channel=PO8 (1 in 23)', filters: { channel: ['PO8'] } },
  { route: 'recordings', name: 'channel=Cz (every recording)', filters: { channel: ['Cz'] } },
  { route: 'recordings', name: 'channel_type=ECG (1 in 97)', filters: { channel_type: 'ECG' } },
  { route: 'recordings', name: 'channel_type=EEG (8 in 10)', filters: { channel_type: 'EEG' } },
  { route: 'recordings', name: 'event_type=seizure (200 recordings)', filters: { event_type: 'seizure' } },
  { route: 'recordings', name: 'event_type=left (every recording)', filters: { event_type: 'left' } },
  { route: 'recordings', name: 'subject=p03 (40 datasets)', filters: { subject: 'p03' } },
  { route: 'recordings', name: 'subject=07 (most datasets)', filters: { subject: '07' } },
  { route: 'recordings', name: 'task=oddball (1 in 7)', filters: { task: 'oddball' } },
  { route: 'recordings', name: 'session=b (1 in 4)', filters: { session: 'b' } },
  { route: 'recordings', name: 'run=42 (1 in 100)', filters: { run: '42' } },
  { route: 'recordings', name: 'datatype=emg (1 in 10)', filters: { datatype: 'emg' } },
  { route: 'recordings', name: 'duration_min=3600 (rare rows)', filters: { duration_min: 3600 } },
  { route: 'recordings', name: 'duration_max=70 (rare rows)', filters: { duration_max: 70 } },
  { route: 'recordings', name: 'channels_min=60', filters: { channels_min: 60 } },
  { route: 'recordings', name: 'channels_max=20', filters: { channels_max: 20 } },
  { route: 'recordings', name: 'task=oddball & channel=Cz', filters: { task: 'oddball', channel: ['Cz'] } },
  { route: 'recordings', name: 'subject=p03 & rate=500', filters: { subject: 'p03', rate: 500 } },
  { route: 'recordings', name: 'rate=8192 & event_type=seizure', filters: { rate: 8192, event_type: 'seizure' } },
  { route: 'recordings', name: 'channel_type=ECG & q=rest', filters: { channel_type: 'ECG', q: 'rest' } },
  { route: 'recordings', name: 'subject=07 & event_type=stim', filters: { subject: '07', event_type: 'stim' } },
  { route: 'search', name: 'no filter', filters: {} },
  { route: 'search', name: 'q=sleep (1 in 7)', filters: { q: 'sleep' } },
  { route: 'search', name: 'q=zzzzqx (nothing)', filters: { q: 'zzzzqx' } },
  { route: 'search', name: 'q="Study 4242"', filters: { q: 'Study 4242' } },
  { route: 'search', name: 'modality=ieeg', filters: { modality: 'ieeg' } },
  { route: 'search', name: 'task=oddball', filters: { task: 'oddball' } },
  { route: 'search', name: 'subject=07 (most datasets)', filters: { subject: '07' } },
  { route: 'search', name: 'subject=p03 (40 datasets)', filters: { subject: 'p03' } },
  { route: 'search', name: 'rate=500', filters: { samplingRate: 500 } },
  { route: 'search', name: 'rate=8192', filters: { samplingRate: 8192 } },
  { route: 'search', name: 'rate_min=6000', filters: { rateMin: 6000 } },
  { route: 'search', name: 'rate_max=256', filters: { rateMax: 256 } },
  { route: 'search', name: 'min_subjects=20', filters: { minSubjects: 20 } },
  { route: 'search', name: 'q=sleep & modality=eeg', filters: { q: 'sleep', modality: 'eeg' } },
  { route: 'search', name: 'task=oddball & subject=p03', filters: { task: 'oddball', subject: 'p03' } },
];

const LIMIT = 100;

/** One request of the case; returns what fetches the next page. */
async function once(c: Case, user: User | undefined, next?: string | number): Promise<string | number | undefined> {
  if (c.route === 'recordings') {
    const page = await listRecordings({ db, config }, user, c.filters as RecordingFilters, { limit: LIMIT, ...(typeof next === 'string' ? { cursor: next } : {}) });
    return page.next_cursor ?? undefined;
  }
  const offset = typeof next === 'number' ? next : 0;
  await searchDatasets({ db, config, log, vectorSimilarity: 'sql' }, user, { q: '', mode: 'fulltext', limit: LIMIT, offset, ...(c.filters as Partial<SearchInput>) });
  return offset + LIMIT;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** The query shape of GET /recordings before decision 0023 (anonymous), for the baseline. */
async function baseline(filters: RecordingFilters): Promise<number | 'timeout'> {
  const where: ReturnType<typeof sql>[] = [sql`dataset_id in (select id from datasets where visibility = 'public')`];
  if (filters.dataset) where.push(sql`dataset_id = ${filters.dataset}`);
  for (const key of ['subject', 'session', 'task', 'run', 'datatype'] as const) if (filters[key] !== undefined) where.push(sql`${sql.ref(key)} = ${filters[key]}`);
  if (filters.rate !== undefined) where.push(sql`${filters.rate}::float8 = any(rates)`);
  if (filters.rate_min !== undefined) where.push(sql`${filters.rate_min}::float8 <= any(rates)`);
  if (filters.channels_min !== undefined) where.push(sql`n_channels >= ${filters.channels_min}`);
  if (filters.duration_min !== undefined) where.push(sql`duration_s >= ${filters.duration_min}`);
  if (filters.channel?.length) where.push(sql`channel_labels @> ${sql.val(filters.channel)}::text[]`);
  if (filters.channel_type) where.push(sql`${filters.channel_type} = any(channel_types)`);
  if (filters.event_type) where.push(sql`${filters.event_type} = any(trial_types)`);
  for (const word of (filters.q ?? '').split(/\s+/).filter(Boolean)) where.push(sql`search_text ilike ${`%${word}%`}`);
  try {
    return await db.connection().execute(async (conn) => {
      await sql`set statement_timeout = 10000`.execute(conn);
      try {
        return await time(() => sql`select * from recordings where ${sql.join(where, sql` and `)} order by dataset_id, zarr limit ${LIMIT + 1}`.execute(conn));
      } finally {
        await sql`set statement_timeout = 0`.execute(conn);
      }
    });
  } catch {
    return 'timeout';
  }
}

const explains: string[] = [];
async function explainOf(c: Case): Promise<void> {
  logged.length = 0;
  await once(c, undefined);
  // Replayed on one connection: a transaction's settings (`set local ...`) hold for the queries after them.
  const client = await pool.connect();
  try {
    for (const event of logged.filter((e) => e.level === 'query')) {
      const text = event.query.sql;
      if (!/^\s*(select|with)\b/i.test(text)) {
        await client.query(text, event.query.parameters as unknown[]);
        continue;
      }
      const plan = await client.query(`explain (analyze, buffers, costs off, timing off, summary on) ${text}`, event.query.parameters as unknown[]);
      explains.push(`-- ${c.route}: ${c.name}\n${text.trim()}\n${plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}\n`);
    }
  } finally {
    client.release();
  }
}

const [counts] = (await sql<{ datasets: number; recordings: number; public: number }>`
  select (select count(*)::int from datasets) as datasets, (select count(*)::int from recordings) as recordings,
    (select count(*)::int from datasets where visibility = 'public') as public`.execute(db)).rows;
console.log(`database ${dbName}: ${counts!.datasets} datasets (${counts!.public} public), ${counts!.recordings} recordings; ${runs} runs a figure, limit ${LIMIT}`);
console.log('| route | filter | caller | first p50 | first p95 | next p50 | next p95 | baseline (old shape, first page, anonymous) | goal |');
console.log('|---|---|---|---:|---:|---:|---:|---:|---|');
let missed = 0;
const chosen = cases.filter((c) => only.test(`${c.route}: ${c.name}`));
for (const c of chosen) {
  const base = c.route === 'recordings' && !args.includes('--no-baseline') ? await baseline(c.filters as RecordingFilters) : undefined;
  for (const [callerName, user] of callers) {
    const first: number[] = [];
    const later: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      let next: string | number | undefined;
      const t1 = await time(async () => (next = await once(c, user)));
      const t2 = next === undefined ? undefined : await time(() => once(c, user, next));
      if (i < 2) continue; // warm-up
      first.push(t1);
      if (t2 !== undefined) later.push(t2);
    }
    const met = percentile(first, 95) <= GOAL_FIRST_MS && (later.length === 0 || percentile(later, 95) <= GOAL_LATER_MS);
    if (!met) missed++;
    const baseText = base === undefined || callerName !== 'anonymous' ? '' : base === 'timeout' ? '> 10 s' : `${ms(base)} ms`;
    console.log(
      `| ${c.route === 'recordings' ? 'GET /recordings' : 'GET /datasets/search'} | ${c.name} | ${callerName} | ${ms(percentile(first, 50))} | ${ms(percentile(first, 95))} | ${later.length ? ms(percentile(later, 50)) : '(one page)'} | ${later.length ? ms(percentile(later, 95)) : ''} | ${baseText} | ${met ? 'met' : '**missed**'} |`,
    );
  }
  if (explainFile) await explainOf(c);
}
console.log(`${chosen.length * callers.length - missed} of ${chosen.length * callers.length} figures within the goal (first page p95 ≤ ${GOAL_FIRST_MS} ms, next ≤ ${GOAL_LATER_MS} ms)`);
if (explainFile) writeFileSync(explainFile, explains.join('\n'));
await db.destroy();
if (!args.includes('--no-semantic')) {
  const semanticUrl = new URL(url);
  semanticUrl.pathname = `/${dbName}_semantic`;
  await benchSemantic(semanticUrl.toString(), runs);
}
