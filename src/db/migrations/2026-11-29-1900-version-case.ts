/**
 * One version number a dataset, whatever its case: `1.0.0-RC.1` and `1.0.0-rc.1` would name one version DOI
 * (DOI names ignore case, DOI Handbook 2.4). Pairs made before this migration stay (a version is never changed,
 * and may be cited) and are left out of the index; `createVersion` refuses new ones under the row lock either way.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ dataset_id: string; folded: string }>`
    select dataset_id, lower(version) as folded from dataset_versions group by dataset_id, lower(version) having count(*) > 1`.execute(db);
  // An index predicate takes no parameters: the pairs are literals (`sql.lit` quotes them; ids and semver hold no quote).
  const earlier = rows.map((r) => sql`(dataset_id = ${sql.lit(r.dataset_id)} and lower(version) = ${sql.lit(r.folded)})`);
  const except = earlier.length > 0 ? sql` where not (${sql.join(earlier, sql` or `)})` : sql``;
  await sql`create unique index dataset_versions_folded_version on dataset_versions (dataset_id, lower(version))${except}`.execute(db);
}
