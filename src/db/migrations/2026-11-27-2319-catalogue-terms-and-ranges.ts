/**
 * Finer fences for the catalogue (decision 0023), measured at 1,000,000 recordings (bench/RESULTS.md):
 *
 * - `recording_terms`: the distinct terms of a dataset's recordings' search text split at white space and at
 *   `/`, `_`, `.` and `-`, so the unique paths of its recordings (`sub-01/eeg/sub-01_task-rest_run-1_eeg.edf`)
 *   become a handful of shared terms (`sub`, `01`, `eeg`, `task`, `rest`...): a dataset's fence shrinks from
 *   kilobytes, stored out of line, to a few hundred bytes, and a word many datasets hold rechecks small rows.
 *   A query word is fenced by its parts between those characters (each lies inside one term), its row by the
 *   whole word.
 * - `recording_ranges`: one row a dataset with the least and greatest rate, channel count and duration of its
 *   recordings, so a range filter (`rate_min`, `channels_max`, `duration_min`...) is one column with its own
 *   statistics: the planner knows how many datasets it admits and picks an ordered walk for a common bound,
 *   an index for a rare one (in `recording_facets` every kind shares one `num` column and its estimates).
 * - Statistics on `recording_facets (kind, value)` and `(kind, num)` (most common pairs), so the planner knows
 *   a value most datasets hold (`channel_type=EEG`, `rate=500`) from a rare one.
 *
 * Expand only: `recording_words` and the numeric facets are still kept by `refresh_recording_fences` for
 * processes of the previous release during a rolling upgrade; a later contract migration drops them.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('recording_terms')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('terms', 'text', (c) => c.notNull())
    .execute();
  await sql`
    do $$
    begin
      if exists (select 1 from pg_extension where extname = 'pg_trgm') then
        create index recording_terms_trigrams on recording_terms using gin (terms gin_trgm_ops);
      end if;
    end $$`.execute(db);

  await db.schema
    .createTable('recording_ranges')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('rate_least', 'float8')
    .addColumn('rate_greatest', 'float8')
    .addColumn('channels_least', 'integer', (c) => c.notNull())
    .addColumn('channels_greatest', 'integer', (c) => c.notNull())
    .addColumn('duration_least', 'float8', (c) => c.notNull())
    .addColumn('duration_greatest', 'float8', (c) => c.notNull())
    .execute();
  for (const column of ['rate_least', 'rate_greatest', 'channels_least', 'channels_greatest', 'duration_least', 'duration_greatest']) {
    await sql`create index ${sql.id(`recording_ranges_${column}`)} on recording_ranges (${sql.id(column)}, dataset_id)`.execute(db);
  }

  await sql`create statistics recording_facets_kind_value (mcv) on kind, value from recording_facets`.execute(db);
  await sql`alter statistics recording_facets_kind_value set statistics 2000`.execute(db);
  await sql`create statistics recording_facets_kind_num (mcv) on kind, num from recording_facets`.execute(db);
  await sql`alter statistics recording_facets_kind_num set statistics 2000`.execute(db);

  // Migration 2026-11-27-1800-recording-fences's function, with the terms and the ranges.
  await sql`
    create or replace function refresh_recording_fences(ids text[]) returns void language sql as $$
      delete from recording_facets where dataset_id = any(ids);
      delete from recording_words where dataset_id = any(ids);
      delete from recording_terms where dataset_id = any(ids);
      delete from recording_ranges where dataset_id = any(ids);
      insert into recording_facets (dataset_id, kind, value, num)
        select dataset_id, kind, value, null from (
          select dataset_id, 'subject' as kind, subject as value from recordings where dataset_id = any(ids) and subject is not null
          union select dataset_id, 'session', session from recordings where dataset_id = any(ids) and session is not null
          union select dataset_id, 'task', task from recordings where dataset_id = any(ids) and task is not null
          union select dataset_id, 'run', run from recordings where dataset_id = any(ids) and run is not null
          union select dataset_id, 'datatype', datatype from recordings where dataset_id = any(ids) and datatype is not null
          union select dataset_id, 'channel', l from recordings, unnest(channel_labels) l where dataset_id = any(ids)
          union select dataset_id, 'channel_type', t from recordings, unnest(channel_types) t where dataset_id = any(ids)
          union select dataset_id, 'event_type', t from recordings, unnest(trial_types) t where dataset_id = any(ids)
        ) texts
        union all
        select dataset_id, kind, null, num from (
          select dataset_id, 'rate' as kind, x as num from recordings, unnest(rates) x where dataset_id = any(ids)
          union select dataset_id, 'n_channels', min(n_channels) from recordings where dataset_id = any(ids) group by dataset_id
          union select dataset_id, 'n_channels', max(n_channels) from recordings where dataset_id = any(ids) group by dataset_id
          union select dataset_id, 'duration', min(duration_s) from recordings where dataset_id = any(ids) group by dataset_id
          union select dataset_id, 'duration', max(duration_s) from recordings where dataset_id = any(ids) group by dataset_id
        ) numbers;
      insert into recording_words (dataset_id, words)
        select dataset_id, string_agg(distinct w, ' ')
        from recordings, regexp_split_to_table(search_text, '[[:space:]]+') w
        where dataset_id = any(ids) and w <> ''
        group by dataset_id;
      insert into recording_terms (dataset_id, terms)
        select dataset_id, string_agg(t, ' ')
        from (select distinct dataset_id, t from recordings, regexp_split_to_table(search_text, '[[:space:]/_.-]+') t where dataset_id = any(ids) and t <> '') terms
        group by dataset_id;
      insert into recording_ranges (dataset_id, rate_least, rate_greatest, channels_least, channels_greatest, duration_least, duration_greatest)
        select dataset_id, min(x), max(x), min(n_channels), max(n_channels), min(duration_s), max(duration_s)
        from recordings left join lateral unnest(rates) x on true
        where dataset_id = any(ids)
        group by dataset_id;
    $$`.execute(db);

  await sql`
    insert into recording_terms (dataset_id, terms)
      select dataset_id, string_agg(t, ' ')
      from (select distinct dataset_id, t from recordings, regexp_split_to_table(search_text, '[[:space:]/_.-]+') t where t <> '') terms
      group by dataset_id`.execute(db);
  await sql`
    insert into recording_ranges (dataset_id, rate_least, rate_greatest, channels_least, channels_greatest, duration_least, duration_greatest)
      select dataset_id, min(x), max(x), min(n_channels), max(n_channels), min(duration_s), max(duration_s)
      from recordings left join lateral unnest(rates) x on true
      group by dataset_id`.execute(db);
  await sql`analyze recording_facets, recording_terms, recording_ranges`.execute(db);
}
