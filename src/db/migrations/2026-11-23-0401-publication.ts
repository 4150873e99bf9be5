/**
 * Publication requests (pending → approved | denied) and DOI records. The partial unique index is what
 * keeps one pending request a dataset under concurrent requests.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('publication_requests')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending','approved','denied')`))
    .addColumn('requested_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('requested_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('message', 'text')
    .addColumn('decided_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('decided_at', 'timestamptz')
    .addColumn('reason', 'text')
    .addColumn('doi', 'text')
    .execute();
  await sql`create unique index publication_one_pending on publication_requests (dataset_id) where status = 'pending'`.execute(db);
  await db.schema.createIndex('publication_requests_status').on('publication_requests').columns(['status', 'id']).execute();

  await db.schema
    .createTable('doi_records')
    .addColumn('doi', 'text', (c) => c.primaryKey())
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('concept','version')`))
    .addColumn('version', 'text')
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('test', 'boolean', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('metadata', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('doi_records_dataset').on('doi_records').column('dataset_id').execute();
}
