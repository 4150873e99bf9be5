/**
 * A conversion job split into recording tasks that any worker takes (decision 0024). The job keeps its
 * plan (`plan`: the source commit, every recording in source order, kept or to convert, and the stores to
 * delete) once a worker made it; each recording to convert is a `conversion_tasks` row with its own lease,
 * attempts and outcome (`store`: the index entry written; `failure`: the index failure). Only additions:
 * a process of the previous release keeps reading and writing `conversion_jobs` as it did.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversion_jobs').addColumn('plan', 'jsonb').execute();
  await db.schema
    .createTable('conversion_tasks')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('job_id', 'integer', (c) => c.notNull().references('conversion_jobs.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('zarr', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('queued','running','done','failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('worker_id', 'text')
    .addColumn('started_at', 'timestamptz')
    .addColumn('heartbeat_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .addColumn('store', 'jsonb')
    .addColumn('failure', 'jsonb')
    .addColumn('error', 'text')
    .execute();
  await sql`create unique index conversion_tasks_position on conversion_tasks (job_id, position)`.execute(db);
  await sql`create index conversion_tasks_open on conversion_tasks (job_id, id) where state in ('queued', 'running')`.execute(db);
  // Pruning finished jobs by age (CONVERSION_JOBS_KEEP_DAYS).
  await sql`create index conversion_jobs_finished on conversion_jobs (finished_at) where state in ('done', 'failed')`.execute(db);
}
