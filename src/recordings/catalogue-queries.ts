/**
 * Every read and write of `recordings` rows and of their fences (`recording_facets`, `recording_words`,
 * decision 0023): the one module that queries those tables. Rows are replaced per dataset by the catalogue
 * sync (`catalogue-sync.ts`), fences with them; the filters of `GET /recordings` are composed here.
 */
import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/types.js';
import type { User } from '../db/accounts-tables.js';
import type { RecordingsTable } from '../db/recordings-tables.js';
import { isAdmin } from '../datasets/dataset-access.js';
import { readableDatasetIds, readableDatasetsQuery } from '../datasets/dataset-queries.js';
import type { RecordingFilters } from '../client/index.js';

export type RecordingRow = Selectable<RecordingsTable>;

/** Filters of `GET /recordings` (and of window lists): the client's, so both sides share one shape. */
export type { RecordingFilters } from '../client/index.js';

/** What the dataset queries need of the caller to decide what it may read. */
function readerOf(user: User | undefined): { id: number; admin: boolean } | undefined {
  return user && { id: user.id, admin: isAdmin(user) };
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
    await refreshFences(trx, [datasetId]);
  });
}

/**
 * Rebuilds the fences (`recording_facets`, `recording_words`) of `datasetIds` from their rows; the SQL is the
 * migration's function, so one definition serves the catalogue, the migration's backfill and the bench.
 */
export async function refreshFences(db: Kysely<Database>, datasetIds: string[]): Promise<void> {
  await sql`select refresh_recording_fences(${sql.val(datasetIds)}::text[])`.execute(db);
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

/** What a page presents of a row: not the filter arrays nor the search text. */
const PAGE_COLUMNS = ['r.dataset_id', 'r.zarr', 'r.path', 'r.source_commit', 'r.subject', 'r.session', 'r.task', 'r.run', 'r.acquisition', 'r.datatype', 'r.groups', 'r.events'] as const;

export type RecordingPageRow = Pick<RecordingRow, 'dataset_id' | 'zarr' | 'path' | 'source_commit' | 'subject' | 'session' | 'task' | 'run' | 'acquisition' | 'datatype' | 'groups' | 'events'>;

/** The words of `q`, each with its `%word%` pattern, LIKE's own characters escaped. */
function wordPatterns(q: string | undefined): Array<{ word: string; pattern: string }> {
  return (q ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((word) => ({ word, pattern: `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%` }));
}

/**
 * The datasets whose recordings may match `filters` (decision 0023): readable by `user`, at or after the
 * cursor's dataset, and admitted by the fence of every filter. `undefined` when nothing narrows (an admin's
 * unfiltered list walks the whole catalogue).
 */
function candidateDatasets(db: Kysely<Database>, user: User | undefined, filters: RecordingFilters, after: CatalogueCursor | undefined) {
  let d = readableDatasetsQuery(db, readerOf(user));
  let narrowed = !isAdmin(user);
  if (filters.dataset) {
    d = d.where('d.id', '=', filters.dataset);
    narrowed = true;
  }
  const text = (kind: string, value: string) => {
    d = d.where((eb) => eb.exists(eb.selectFrom('recording_facets as f').select(sql`1`.as('one')).whereRef('f.dataset_id', '=', 'd.id').where('f.kind', '=', kind).where('f.value', '=', value)));
    narrowed = true;
  };
  const num = (kind: string, op: '=' | '>=' | '<=', value: number) => {
    d = d.where((eb) => eb.exists(eb.selectFrom('recording_facets as f').select(sql`1`.as('one')).whereRef('f.dataset_id', '=', 'd.id').where('f.kind', '=', kind).where('f.num', op, value)));
    narrowed = true;
  };
  for (const key of ['subject', 'session', 'task', 'run', 'datatype'] as const) {
    const value = filters[key];
    if (value !== undefined) text(key, value);
  }
  for (const label of filters.channel ?? []) text('channel', label);
  if (filters.channel_type) text('channel_type', filters.channel_type.toUpperCase());
  if (filters.event_type) text('event_type', filters.event_type);
  if (filters.rate !== undefined) num('rate', '=', filters.rate);
  if (filters.rate_min !== undefined) num('rate', '>=', filters.rate_min);
  if (filters.rate_max !== undefined) num('rate', '<=', filters.rate_max);
  if (filters.channels_min !== undefined) num('n_channels', '>=', filters.channels_min);
  if (filters.channels_max !== undefined) num('n_channels', '<=', filters.channels_max);
  if (filters.duration_min !== undefined) num('duration', '>=', filters.duration_min);
  if (filters.duration_max !== undefined) num('duration', '<=', filters.duration_max);
  // A trigram index cannot narrow a word under three characters; its rows are tested on the walk alone.
  for (const { pattern } of wordPatterns(filters.q).filter(({ word }) => [...word].length >= 3)) {
    d = d.where((eb) => eb.exists(eb.selectFrom('recording_words as w').select(sql`1`.as('one')).whereRef('w.dataset_id', '=', 'd.id').where('w.words', 'ilike', pattern)));
    narrowed = true;
  }
  if (!narrowed) return undefined;
  if (after) d = d.where('d.id', '>=', after.dataset_id);
  return d;
}

/**
 * One page of the recordings `user` may read that match `filters`, in (dataset, store) order: the
 * candidate datasets are fixed first (an array, so the walk is an ordered scan of the primary key over
 * them alone), then each row is tested against every filter.
 */
export async function listRecordingRows(
  db: Kysely<Database>,
  user: User | undefined,
  filters: RecordingFilters,
  page: { limit: number; after?: CatalogueCursor },
): Promise<RecordingPageRow[]> {
  const candidates = candidateDatasets(db, user, filters, page.after);
  if (!candidates) return pageOf(db, filters, page);
  return db.transaction().execute(async (trx) => {
    // The fences are read first, on their own: the trigram index of the words is read by bitmap scans only.
    const { rows } = await sql<{ ids: string[] }>`select array(${candidates}) as ids`.execute(trx);
    const ids = rows[0]!.ids;
    if (ids.length === 0) return [];
    // Then the walk. The planner cannot know the candidates' number (a parameter it does not look into, so
    // thousands of ids cost nothing to plan) and guesses a bitmap scan of all their rows and a sort: for a
    // candidate set of thousands of datasets, every row of them. The ordered walk of the primary key stops
    // at the page's last row; told to leave bitmaps and whole-table scans out, the planner takes it (word
    // filters look rare to it, and it would read the whole table and sort rather than walk).
    await sql`select set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)`.execute(trx);
    return pageOf(trx, filters, page, ids);
  });
}

async function pageOf(
  db: Kysely<Database>,
  filters: RecordingFilters,
  page: { limit: number; after?: CatalogueCursor },
  candidates?: string[],
): Promise<RecordingPageRow[]> {
  let q = db.selectFrom('recordings as r').select(PAGE_COLUMNS);
  if (candidates) q = q.where(sql<boolean>`r.dataset_id = any((select ${sql.val(candidates)}::text[])::text[])`);
  if (filters.dataset) q = q.where('r.dataset_id', '=', filters.dataset);
  for (const key of ['subject', 'session', 'task', 'run', 'datatype'] as const) {
    const value = filters[key];
    if (value !== undefined) q = q.where(`r.${key}`, '=', value);
  }
  if (filters.rate !== undefined) q = q.where(sql<boolean>`${filters.rate}::float8 = any(r.rates)`);
  if (filters.rate_min !== undefined) q = q.where(sql<boolean>`${filters.rate_min}::float8 <= any(r.rates)`);
  if (filters.rate_max !== undefined) q = q.where(sql<boolean>`${filters.rate_max}::float8 >= any(r.rates)`);
  if (filters.channels_min !== undefined) q = q.where('r.n_channels', '>=', filters.channels_min);
  if (filters.channels_max !== undefined) q = q.where('r.n_channels', '<=', filters.channels_max);
  if (filters.duration_min !== undefined) q = q.where('r.duration_s', '>=', filters.duration_min);
  if (filters.duration_max !== undefined) q = q.where('r.duration_s', '<=', filters.duration_max);
  if (filters.channel && filters.channel.length > 0) q = q.where(sql<boolean>`r.channel_labels @> ${sql.val(filters.channel)}::text[]`);
  if (filters.channel_type) q = q.where(sql<boolean>`${filters.channel_type.toUpperCase()} = any(r.channel_types)`);
  if (filters.event_type) q = q.where(sql<boolean>`${filters.event_type} = any(r.trial_types)`);
  for (const { pattern } of wordPatterns(filters.q)) q = q.where('r.search_text', 'ilike', pattern);
  if (page.after) q = q.where(sql<boolean>`(r.dataset_id, r.zarr) > (${page.after.dataset_id}, ${page.after.zarr})`);
  return (await q.orderBy('r.dataset_id').orderBy('r.zarr').limit(page.limit).execute()) as RecordingPageRow[];
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

/**
 * The store folder of the recording at `path` (data file or store folder) in `datasetId`, when `user` may read
 * the dataset (`'granted'`: a read grant of the dataset was checked): visibility and look-up in one query,
 * since a window is read on every request.
 */
export async function findReadableStore(db: Kysely<Database>, user: User | undefined | 'granted', datasetId: string, path: string): Promise<string | undefined> {
  let q = db
    .selectFrom('recordings')
    .select('zarr')
    .where('dataset_id', '=', datasetId)
    .where((eb) => eb.or([eb('path', '=', path), eb('zarr', '=', path)]));
  const readable = user === 'granted' ? undefined : readableDatasetIds(db, readerOf(user));
  if (readable) q = q.where('dataset_id', 'in', readable);
  return (await q.executeTakeFirst())?.zarr;
}
