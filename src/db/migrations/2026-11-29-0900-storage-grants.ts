/**
 * Storage quotas (decision 0051): a row for every object key a dataset was granted room for, with its bytes.
 * The sum of an account's rows over the datasets it owns is what it holds (`datasets/storage-quota.ts` owns
 * the table); `dataset_storage` keeps each dataset's sum, written only by the trigger below. `confirmed` once the bytes are known to be stored; an unconfirmed grant whose `expires_at` has
 * passed is looked up in the store by the sweep, and confirmed or dropped.
 *
 * `users.storage_quota_bytes`: an administrator's limit for one account (all its datasets, sandbox ones
 * included; 0: none), in place of the settings; null: the settings.
 *
 * Datasets from before this migration count the size of their latest version (`datasets.size_bytes`) under
 * the key `versions`: their content was never granted one key at a time.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('storage_grants')
    .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('bytes', 'bigint', (c) => c.notNull().check(sql`bytes >= 0`))
    .addColumn('confirmed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('storage_grants_pkey', ['dataset_id', 'object_key'])
    .execute();
  await db.schema.alterTable('users').addColumn('storage_quota_bytes', 'bigint', (c) => c.check(sql`storage_quota_bytes >= 0`)).execute();
  await sql`create index storage_grants_due on storage_grants (expires_at) where not confirmed`.execute(db);
  // The sum of a dataset's grants, kept by a trigger in the statement that changes them: a reservation reads one
  // row a dataset of the owner, not every grant (a million files' grants took 0.2 s to sum on PostgreSQL).
  await db.schema
    .createTable('dataset_storage')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('bytes', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`
    create function dataset_storage_follow() returns trigger language plpgsql as $$
    begin
      if tg_op in ('UPDATE', 'DELETE') then
        -- A dataset deleted takes its row with it before its grants: nothing to take from then.
        update dataset_storage set bytes = bytes - old.bytes where dataset_id = old.dataset_id;
      end if;
      if tg_op in ('INSERT', 'UPDATE') then
        insert into dataset_storage (dataset_id, bytes) values (new.dataset_id, new.bytes)
        on conflict (dataset_id) do update set bytes = dataset_storage.bytes + excluded.bytes;
      end if;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger storage_grants_total after insert or update of bytes or delete on storage_grants
    for each row execute function dataset_storage_follow()`.execute(db);
  await sql`
    insert into storage_grants (dataset_id, object_key, bytes, confirmed, expires_at)
    select id, 'versions', size_bytes, true, now() from datasets where size_bytes > 0`.execute(db);
}
