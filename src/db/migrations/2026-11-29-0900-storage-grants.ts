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
  // Statement-level, over the statement's transition tables: one write of the sums a statement, however many
  // grants it inserts (a version from a commit of many files), not one a row. A dataset deleted takes its sum
  // with it before its grants: an update of it then finds nothing, as it should.
  await sql`
    create function dataset_storage_added() returns trigger language plpgsql as $$
    begin
      insert into dataset_storage (dataset_id, bytes)
      select dataset_id, sum(bytes) from added group by dataset_id
      on conflict (dataset_id) do update set bytes = dataset_storage.bytes + excluded.bytes;
      return null;
    end $$`.execute(db);
  await sql`
    create function dataset_storage_changed() returns trigger language plpgsql as $$
    begin
      update dataset_storage s set bytes = s.bytes + c.delta
      from (select dataset_id, sum(bytes) as delta from (select dataset_id, bytes from added union all select dataset_id, -bytes from removed) r group by dataset_id) c
      where s.dataset_id = c.dataset_id and c.delta <> 0;
      return null;
    end $$`.execute(db);
  await sql`
    create function dataset_storage_removed() returns trigger language plpgsql as $$
    begin
      update dataset_storage s set bytes = s.bytes - c.bytes
      from (select dataset_id, sum(bytes) as bytes from removed group by dataset_id) c
      where s.dataset_id = c.dataset_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger storage_grants_added after insert on storage_grants referencing new table as added for each statement execute function dataset_storage_added()`.execute(db);
  await sql`create trigger storage_grants_changed after update on storage_grants referencing old table as removed new table as added for each statement execute function dataset_storage_changed()`.execute(db);
  await sql`create trigger storage_grants_removed after delete on storage_grants referencing old table as removed for each statement execute function dataset_storage_removed()`.execute(db);
  await sql`
    insert into storage_grants (dataset_id, object_key, bytes, confirmed, expires_at)
    select id, 'versions', size_bytes, true, now() from datasets where size_bytes > 0`.execute(db);
}
