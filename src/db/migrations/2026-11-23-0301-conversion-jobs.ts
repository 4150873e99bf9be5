import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('conversion_jobs')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('full', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('queued','running','done','failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reason', 'text')
    .addColumn('worker_id', 'text')
    .addColumn('requested_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('heartbeat_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('result', 'jsonb')
    .addColumn('error', 'text')
    .execute();
  // One queued job per dataset: a dispatch while one waits is coalesced into it.
  await sql`create unique index conversion_jobs_one_queued on conversion_jobs (dataset_id) where state = 'queued'`.execute(db);
  // One running job per dataset.
  await sql`create unique index conversion_jobs_one_running on conversion_jobs (dataset_id) where state = 'running'`.execute(db);
  await db.schema.createIndex('conversion_jobs_dataset').on('conversion_jobs').columns(['dataset_id', 'id']).execute();
}
