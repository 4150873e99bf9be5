/**
 * The recording catalogue: one row per converted recording (store) of a dataset's Zarr copy, derived from
 * `index.json` and each store's metadata, replaced with each conversion and gone with the dataset
 * (ON DELETE CASCADE). Arrays hold what the filters of `GET /recordings` test: rates, labels, types.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('recordings')
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('zarr', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('source_commit', 'text')
    .addColumn('subject', 'text')
    .addColumn('session', 'text')
    .addColumn('task', 'text')
    .addColumn('run', 'text')
    .addColumn('acquisition', 'text')
    .addColumn('datatype', 'text')
    .addColumn('duration_s', 'float8', (c) => c.notNull())
    .addColumn('n_channels', 'integer', (c) => c.notNull())
    .addColumn('rates', sql`float8[]`, (c) => c.notNull())
    .addColumn('channel_labels', sql`text[]`, (c) => c.notNull())
    .addColumn('channel_types', sql`text[]`, (c) => c.notNull())
    .addColumn('trial_types', sql`text[]`, (c) => c.notNull())
    .addColumn('groups', 'jsonb', (c) => c.notNull())
    .addColumn('events', 'jsonb', (c) => c.notNull())
    .addColumn('search_text', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('recordings_pkey', ['dataset_id', 'zarr'])
    .execute();
  await db.schema.createIndex('recordings_task').on('recordings').column('task').execute();
  await db.schema.createIndex('recordings_subject').on('recordings').column('subject').execute();
}
