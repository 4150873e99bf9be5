/**
 * People a dataset is shared with (issue 26, decision 0028): one row per (dataset, account) with its role,
 * `reader`, `annotator` or `maintainer`. The owner is not a row (the dataset names its owner); a deleted
 * dataset takes its members with it. `datasets/dataset-members-queries.ts` owns the table.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dataset_members')
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('reader', 'annotator', 'maintainer')`))
    .addColumn('added_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('dataset_members_pkey', ['dataset_id', 'user_id'])
    .execute();
  // "Which private datasets may this account read": every list and the catalogue ask it by account.
  await db.schema.createIndex('dataset_members_user').on('dataset_members').columns(['user_id', 'dataset_id']).execute();
}
