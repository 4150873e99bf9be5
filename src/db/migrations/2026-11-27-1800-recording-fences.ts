/**
 * Fences of the recording catalogue (decision 0023): for each dataset, the values its recordings hold for
 * each filter of `GET /recordings` (`recording_facets`: subjects, sessions, tasks, runs, datatypes, channel
 * labels and types, event types, rates; the least and greatest channel count and duration) and the distinct
 * words of their search text (`recording_words`, under a trigram index where pg_trgm exists). A query first
 * picks the visible datasets whose fences admit every filter, through these indexes, then walks only their
 * recordings in primary-key order: a value held by few datasets costs as few, and one held by many is met
 * at once on the walk. A fence may admit a dataset whose recordings then all fail the row's own test
 * (a superset), never the reverse.
 *
 * `refresh_recording_fences(ids)` rebuilds the fences of the given datasets from their rows; the catalogue
 * calls it in the transaction that replaces a dataset's rows, so fences and rows change together.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // pg_trgm is optional like pgvector: without it the words are read by a sequential scan (10,000 rows).
  await sql`
    do $$
    begin
      if exists (select 1 from pg_available_extensions where name = 'pg_trgm') then
        begin
          create extension if not exists pg_trgm;
        exception when others then
          raise notice 'pg_trgm not created: %', sqlerrm;
        end;
      end if;
    end $$`.execute(db);

  await db.schema
    .createTable('recording_facets')
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addColumn('num', 'float8')
    .addCheckConstraint('recording_facets_one_value', sql`(value is null) <> (num is null)`)
    .execute();
  await sql`create index recording_facets_value on recording_facets (kind, value, dataset_id) where value is not null`.execute(db);
  await sql`create index recording_facets_num on recording_facets (kind, num, dataset_id) where num is not null`.execute(db);
  await sql`create index recording_facets_dataset on recording_facets (dataset_id)`.execute(db);

  await db.schema
    .createTable('recording_words')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('words', 'text', (c) => c.notNull())
    .execute();
  await sql`
    do $$
    begin
      if exists (select 1 from pg_extension where extname = 'pg_trgm') then
        create index recording_words_trigrams on recording_words using gin (words gin_trgm_ops);
      end if;
    end $$`.execute(db);

  // Text kinds hold every distinct value; numeric kinds (rate: every value; n_channels and duration: the
  // least and the greatest) answer `= x`, `>= x` and `<= x` as "some recording may".
  await sql`
    create function refresh_recording_fences(ids text[]) returns void language sql as $$
      delete from recording_facets where dataset_id = any(ids);
      delete from recording_words where dataset_id = any(ids);
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
    $$`.execute(db);

  await sql`select refresh_recording_fences(array(select distinct dataset_id from recordings))`.execute(db);
}
