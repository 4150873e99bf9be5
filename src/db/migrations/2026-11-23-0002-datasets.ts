import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence dataset_number`.execute(db);
  await sql`create sequence sandbox_number`.execute(db);
  await db.schema
    .createTable('datasets')
    .addColumn('id', 'text', (c) => c.primaryKey().check(sql`id ~ '^(nd|sb)[0-9]{6}$'`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id'))
    .addColumn('visibility', 'text', (c) => c.notNull().check(sql`visibility in ('public','private')`))
    .addColumn('sandbox', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('source_repo', 'text')
    .addColumn('external_ids', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('license', 'text')
    .addColumn('authors', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('keywords', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('modalities', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('tasks', sql`text[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('n_subjects', 'integer')
    .addColumn('size_bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('latest_version', 'text')
    .addColumn('doi', 'text')
    .addColumn('concept_doi', 'text')
    .addColumn('publication_status', 'text')
    .addColumn('zarr_status', 'text', (c) => c.check(sql`zarr_status in ('pending','converting','ready','failed')`))
    .addColumn('zarr_converted_at', 'timestamptz')
    .addColumn('zarr_store_count', 'integer')
    .addColumn('zarr_index_etag', 'text')
    .addColumn('zarr_source_commit', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('datasets_owner').on('datasets').column('owner_id').execute();
}
