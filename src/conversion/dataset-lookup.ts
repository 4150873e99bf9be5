import { sql, type Kysely } from 'kysely';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Database } from '../db/types.js';

/** The dataset whose `source_repo` or `external_ids` names one of `keys` (already normalized, lower case). */
export async function findDatasetByRepository(db: Kysely<Database>, keys: string[]): Promise<DatasetRow | undefined> {
  if (keys.length === 0) return undefined;
  const { rows } = await sql<DatasetRow>`
    select * from datasets
    where rtrim(regexp_replace(lower(coalesce(source_repo, '')), '\\.git$', ''), '/') = any(${keys}::text[])
       or exists (select 1 from unnest(external_ids) e where lower(e) = any(${keys}::text[]))
    order by id
    limit 1`.execute(db);
  return rows[0];
}
