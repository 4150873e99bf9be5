/**
 * Indexes for the catalogue's walk and the dataset search (decision 0023, measured in bench/RESULTS.md):
 * - `recordings (dataset_id, duration_s)`: a duration bound most datasets' fences admit but few of their
 *   recordings pass is read from the index for a batch of candidates, not by reading each wide row;
 * - `datasets (updated_at desc, id)`: a search without words is read in its order, as far as the page goes;
 * - `datasets (lower(name))`: the exact-title match of a search (`lower(name) = lower(q)`) is an index
 *   probe, so the full-text condition `search_vector @@ q or lower(name) = lower(q)` is a bitmap OR of two
 *   indexes instead of a scan of every dataset.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index recordings_dataset_duration on recordings (dataset_id, duration_s)`.execute(db);
  await sql`create index datasets_recent on datasets (updated_at desc, id)`.execute(db);
  await sql`create index datasets_lower_name on datasets (lower(name))`.execute(db);
}
