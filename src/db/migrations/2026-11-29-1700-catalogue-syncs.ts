/**
 * The commit whose `index.json` each dataset's recording catalogue was last read from whole
 * (`recordings/catalogue-sync.ts`, `recordings/catalogue-queries.ts` owns the table). A conversion re-reads
 * only the stores it wrote when the catalogue was whole at the copy it started from; the startup backfill
 * reads again every copy whose catalogue is not whole at the dataset's `zarr_source_commit`. A catalogue that has
 * rows is taken to be whole at its dataset's commit: reading a million recordings' stores again at the first
 * start would cost more than the rare catalogue a failed sync left partly stale, which its next conversion
 * that changes those stores mends.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('catalogue_syncs')
    .addColumn('dataset_id', 'text', (c) => c.primaryKey().references('datasets.id').onDelete('cascade'))
    .addColumn('source_commit', 'text', (c) => c.notNull())
    .addColumn('synced_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`
    insert into catalogue_syncs (dataset_id, source_commit, synced_at)
    select d.id, d.zarr_source_commit, now() from datasets d
    where d.zarr_source_commit is not null and exists (select 1 from recordings r where r.dataset_id = d.id)`.execute(db);
}
