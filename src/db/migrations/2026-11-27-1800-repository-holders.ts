/**
 * Which node holds each hosted git repository (decision 0026): nodes share no disk, so a repository lives on
 * the disk of the node that received its first push, and every other node forwards its git requests there.
 * Repositories pushed before this table existed get their row from the node that finds one on its own disk.
 */
import { type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('repository_holders')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('node_url', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('repository_holders_node_url').on('repository_holders').column('node_url').execute();
}
