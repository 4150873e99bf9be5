/**
 * Annotations of recordings (issue 26, decision 0028): time spans with a label, made by people in the web or
 * by imports. `annotations` holds the current ones; `annotation_revisions` the revision of each recording
 * (dataset, data file path), moved by every change in the statement that settles `If-Match` races;
 * `annotation_changes` every change kept, with the revision it made, its author and time, and the annotation
 * before and after (null when created or deleted). `annotations/annotation-queries.ts` owns all three.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('annotations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('onset', 'double precision', (c) => c.notNull())
    .addColumn('duration', 'double precision', (c) => c.notNull())
    .addColumn('channels', sql`text[]`)
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('hed', 'text')
    .addColumn('note', 'text')
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('annotations_recording').on('annotations').columns(['dataset_id', 'path', 'onset']).execute();

  await db.schema
    .createTable('annotation_revisions')
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('annotation_revisions_pkey', ['dataset_id', 'path'])
    .execute();

  await db.schema
    .createTable('annotation_changes')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('revision', 'integer', (c) => c.notNull())
    .addColumn('annotation_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull().check(sql`action in ('create', 'update', 'delete')`))
    .addColumn('before', 'jsonb')
    .addColumn('after', 'jsonb')
    .addColumn('author_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('annotation_changes_recording').on('annotation_changes').columns(['dataset_id', 'path', 'revision']).execute();
}
