/**
 * Search fields of datasets: recording facts (sampling rates, channel counts), a weighted full-text vector
 * kept by a trigger (generated columns need immutable expressions, and array_to_string is only stable), and
 * embeddings for semantic search stored as real[] everywhere (table dataset_embeddings). Where the pgvector
 * extension is available (embedded PGlite loads it; a server needs its package) it is created, and ranking
 * casts real[] to vector; elsewhere a plain SQL cosine function ranks the same column.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('datasets')
    .addColumn('sampling_rates', sql`double precision[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('channel_counts', sql`integer[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('search_vector', sql`tsvector`)
    .execute();
  // Embeddings sit in their own table so that ordinary dataset queries never carry kilobytes of floats.
  await db.schema
    .createTable('dataset_embeddings')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('text_sha256', 'text', (c) => c.notNull())
    .addColumn('embedding', sql`real[]`, (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Rates become tokens like `500hz` (a fraction's point as p: `12p8hz`) and channel counts `64ch`;
  // queries are normalized the same way, so "500 Hz", "500hz" and "64 channels" all match.
  await sql`
    create function datasets_search_vector() returns trigger language plpgsql as $$
    begin
      new.search_vector :=
        setweight(to_tsvector('english', new.id || ' ' || coalesce(new.name, '')), 'A') ||
        setweight(to_tsvector('english', array_to_string(new.keywords || new.authors || new.tasks || new.external_ids, ' ')), 'B') ||
        setweight(to_tsvector('english', coalesce(new.description, '')), 'C') ||
        setweight(to_tsvector('english',
          array_to_string(new.modalities, ' ') || ' ' ||
          array_to_string(array(select replace(r::text, '.', 'p') || 'hz' from unnest(new.sampling_rates) r), ' ') || ' ' ||
          array_to_string(array(select c::text || 'ch' from unnest(new.channel_counts) c), ' ') || ' ' ||
          coalesce((select string_agg(t, ' ') from jsonb_array_elements_text(
            case when jsonb_typeof(new.metadata -> 'recording' -> 'trial_types') = 'array'
                 then new.metadata -> 'recording' -> 'trial_types' else '[]'::jsonb end) t), '')
        ), 'D');
      return new;
    end $$`.execute(db);
  await sql`create trigger datasets_search_vector before insert or update on datasets for each row execute function datasets_search_vector()`.execute(db);
  await sql`update datasets set name = name`.execute(db);
  await sql`create index datasets_search on datasets using gin (search_vector)`.execute(db);

  await sql`
    create function nds_cosine(a real[], b real[]) returns double precision language sql immutable as $$
      select sum(x * y) / nullif(sqrt(sum(x * x)) * sqrt(sum(y * y)), 0)
      from unnest(a, b) as t(x, y)
    $$`.execute(db);

  // The extension is optional: a server without the package, or a role that may not create it, keeps the
  // SQL cosine function. The exception block runs in a subtransaction, so a refusal does not abort the migration.
  await sql`
    do $$
    begin
      if exists (select 1 from pg_available_extensions where name = 'vector') then
        begin
          create extension if not exists vector;
        exception when others then
          raise notice 'pgvector not created: %', sqlerrm;
        end;
      end if;
    end $$`.execute(db);
}
