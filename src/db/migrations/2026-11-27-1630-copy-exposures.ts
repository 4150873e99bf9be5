/**
 * What a dataset's Zarr copy shows at the object store's anonymous public base must follow its visibility
 * (decision 0016): a row per dataset whose objects' public-read tags may not match it yet. `want_seq` moves
 * on every change that needs a sweep, `done_seq` when a sweep of that want finished; `scope` names what to
 * sweep (paths under `<id>/zarr/`, a trailing `/` for a folder; null for the whole copy). `lease_until`
 * and `lease_holder` let one process at a time sweep the copy or write its `index.json`.
 *
 * A trigger wants a whole-copy sweep in the same statement that changes a dataset's visibility, so no crash
 * can separate the change from its sweep. Copies made before this migration carry no tags (private under
 * the new bucket policy) and name a public `data_base` whatever their visibility: public datasets want a
 * whole sweep, the others an `index.json` rewrite.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('copy_exposures')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('want_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('done_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('scope', sql`text[]`)
    .addColumn('lease_until', 'timestamptz')
    .addColumn('lease_holder', 'text')
    .execute();
  await sql`create index copy_exposures_due on copy_exposures (dataset_id) where want_seq > done_seq`.execute(db);
  await sql`
    create function copy_exposure_wanted() returns trigger language plpgsql as $$
    begin
      insert into copy_exposures (dataset_id, want_seq, scope) values (new.id, 1, null)
      on conflict (dataset_id) do update set want_seq = copy_exposures.want_seq + 1, scope = null;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger datasets_copy_exposure after update of visibility on datasets
    for each row when (old.visibility is distinct from new.visibility) execute function copy_exposure_wanted()`.execute(db);
  await sql`
    insert into copy_exposures (dataset_id, want_seq, scope)
    select id, 1, case when visibility = 'public' then null else array['index.json'] end
    from datasets where zarr_status is not null`.execute(db);
}
