/** One factory for dataset rows written straight to a test database (the columns a test does not care about are empty). */
import type { Insertable, Kysely } from 'kysely';
import type { Database } from '../../src/db/types.js';
import type { DatasetsTable } from '../../src/db/datasets-tables.js';
import { unsetDatasetColumns } from '../../src/datasets/create-dataset.js';

export type DatasetSeed = Pick<Insertable<DatasetsTable>, 'id' | 'name' | 'owner_id'> & Partial<Insertable<DatasetsTable>>;

/** A full `datasets` row: public, no repository, no version, no publication, not converted, unless `seed` says so. */
export function datasetRow(seed: DatasetSeed): Insertable<DatasetsTable> {
  return { visibility: 'public', source_repo: null, license: null, ...unsetDatasetColumns, ...seed };
}

/** Inserts one dataset row, or several. */
export async function insertDatasetRows(db: Kysely<Database>, seeds: DatasetSeed | DatasetSeed[]): Promise<void> {
  await db.insertInto('datasets').values(Array.isArray(seeds) ? seeds.map(datasetRow) : datasetRow(seeds)).execute();
}
