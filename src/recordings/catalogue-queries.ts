/**
 * Every read and write of `recordings` rows: the one module that queries the table. Rows are replaced per
 * dataset by the catalogue sync (`catalogue-sync.ts`); the filters of `GET /recordings` are composed here.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/types.js';
import type { RecordingsTable } from '../db/recordings-tables.js';
import { readableDatasetIds } from '../datasets/dataset-queries.js';
import type { RecordingFilters } from '../client/index.js';

export type RecordingRow = Selectable<RecordingsTable>;

/** Filters of `GET /recordings` (and of window lists): the client's, so both sides share one shape. */
export type { RecordingFilters } from '../client/index.js';

export interface Viewer {
  id: number;
  admin: boolean;
}

/** Where a page ends: the last row's key. */
export interface CatalogueCursor {
  dataset_id: string;
  zarr: string;
}

export type NewRecording = Omit<Insertable<RecordingsTable>, 'dataset_id' | 'updated_at'>;

/** Replaces the rows of `datasetId` whose stores are named in `rows`, and drops rows of stores not in `keep`. */
export async function replaceRecordings(db: Kysely<Database>, datasetId: string, rows: NewRecording[], keep: string[], sourceCommit: string | null, now: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    let drop = trx.deleteFrom('recordings').where('dataset_id', '=', datasetId);
    if (keep.length > 0) drop = drop.where('zarr', 'not in', keep);
    await drop.execute();
    if (rows.length > 0) await trx.deleteFrom('recordings').where('dataset_id', '=', datasetId).where('zarr', 'in', rows.map((r) => r.zarr)).execute();
    for (let i = 0; i < rows.length; i += 200) {
      await trx
        .insertInto('recordings')
        .values(rows.slice(i, i + 200).map((r) => ({ ...r, dataset_id: datasetId, updated_at: now })))
        .execute();
    }
    // Stores kept unchanged belong to the new commit too.
    if (sourceCommit !== null) await trx.updateTable('recordings').set({ source_commit: sourceCommit }).where('dataset_id', '=', datasetId).execute();
  });
}

/** The store folders that have a row, for one dataset. */
export async function catalogued(db: Kysely<Database>, datasetId: string): Promise<Set<string>> {
  const rows = await db.selectFrom('recordings').select('zarr').where('dataset_id', '=', datasetId).execute();
  return new Set(rows.map((r) => r.zarr));
}

export async function countCatalogued(db: Kysely<Database>, datasetId: string): Promise<number> {
  const row = await db.selectFrom('recordings').select((eb) => eb.fn.countAll<string>().as('n')).where('dataset_id', '=', datasetId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One page of the recordings `viewer` may read that match `filters`, in (dataset, store) order. */
export async function listRecordingRows(
  db: Kysely<Database>,
  viewer: Viewer | undefined,
  filters: RecordingFilters,
  page: { limit: number; after?: CatalogueCursor },
): Promise<RecordingRow[]> {
  let q = db.selectFrom('recordings').selectAll();
  const readable = readableDatasetIds(db, viewer);
  if (readable) q = q.where('dataset_id', 'in', readable);
  if (filters.dataset) q = q.where('dataset_id', '=', filters.dataset);
  for (const key of ['subject', 'session', 'task', 'run', 'datatype'] as const) {
    const value = filters[key];
    if (value !== undefined) q = q.where(key, '=', value);
  }
  if (filters.rate !== undefined) q = q.where(sql<boolean>`${filters.rate}::float8 = any(rates)`);
  if (filters.rate_min !== undefined) q = q.where(sql<boolean>`${filters.rate_min}::float8 <= any(rates)`);
  if (filters.rate_max !== undefined) q = q.where(sql<boolean>`${filters.rate_max}::float8 >= any(rates)`);
  if (filters.channels_min !== undefined) q = q.where('n_channels', '>=', filters.channels_min);
  if (filters.channels_max !== undefined) q = q.where('n_channels', '<=', filters.channels_max);
  if (filters.duration_min !== undefined) q = q.where('duration_s', '>=', filters.duration_min);
  if (filters.duration_max !== undefined) q = q.where('duration_s', '<=', filters.duration_max);
  if (filters.channel && filters.channel.length > 0) q = q.where(sql<boolean>`channel_labels @> ${sql.val(filters.channel)}::text[]`);
  if (filters.channel_type) q = q.where(sql<boolean>`${filters.channel_type.toUpperCase()} = any(channel_types)`);
  if (filters.event_type) q = q.where(sql<boolean>`${filters.event_type} = any(trial_types)`);
  for (const word of (filters.q ?? '').split(/\s+/).filter(Boolean)) {
    q = q.where('search_text', 'ilike', `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  }
  if (page.after) {
    const { dataset_id, zarr } = page.after;
    q = q.where((eb) => eb.or([eb('dataset_id', '>', dataset_id), eb.and([eb('dataset_id', '=', dataset_id), eb('zarr', '>', zarr)])]));
  }
  return (await q.orderBy('dataset_id').orderBy('zarr').limit(page.limit).execute()) as RecordingRow[];
}

/** The row of the store whose data file is `path` (or whose store folder is `path`) in one dataset. */
export async function findRecordingRow(db: Kysely<Database>, datasetId: string, path: string): Promise<RecordingRow | undefined> {
  return (await db
    .selectFrom('recordings')
    .selectAll()
    .where('dataset_id', '=', datasetId)
    .where((eb) => eb.or([eb('path', '=', path), eb('zarr', '=', path)]))
    .executeTakeFirst()) as RecordingRow | undefined;
}

/** Ids of datasets with a recording of `subject` (dataset search's `subject` filter). */
export async function datasetsWithSubject(db: Kysely<Database>, subject: string): Promise<string[]> {
  const rows = await db.selectFrom('recordings').select('dataset_id').distinct().where('subject', '=', subject).execute();
  return rows.map((r) => r.dataset_id);
}

/**
 * The store folder of the recording at `path` (data file or store folder) in `datasetId`, when `viewer` may
 * read the dataset: visibility and lookup in one query, since a window is read on every request.
 */
export async function findReadableStore(db: Kysely<Database>, viewer: Viewer | undefined, datasetId: string, path: string): Promise<string | undefined> {
  let q = db
    .selectFrom('recordings')
    .select('zarr')
    .where('dataset_id', '=', datasetId)
    .where((eb) => eb.or([eb('path', '=', path), eb('zarr', '=', path)]));
  const readable = readableDatasetIds(db, viewer);
  if (readable) q = q.where('dataset_id', 'in', readable);
  return (await q.executeTakeFirst())?.zarr;
}
