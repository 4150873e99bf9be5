/**
 * Every read and write of `recordings` rows, of their fences (`recording_facets`, `recording_terms`,
 * `recording_ranges`, and `recording_words` kept for the previous release; decision 0023) and of the commit each
 * dataset's catalogue is whole at (`catalogue_syncs`): the one module that queries those tables. Rows are
 * replaced per dataset by the catalogue sync (`catalogue-sync.ts`), fences with them; the filters of
 * `GET /recordings` are composed here.
 */
import { sql, type Insertable, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Database } from '../db/types.js';
import type { User } from '../db/accounts-tables.js';
import type { RecordingsTable } from '../db/recordings-tables.js';
import { isAdmin } from '../datasets/dataset-access.js';
import { readableDatasetIds, readableDatasetsQuery } from '../datasets/dataset-queries.js';
import type { RecordingFilters } from '../client/index.js';

/** How many of a filter's channel labels narrow the candidate datasets through their fence (`candidateDatasets`). */
const FENCED_CHANNEL_LABELS = 4;

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

/** What a sync of the catalogue writes for one dataset, from its copy's index. */
export interface CatalogueChange {
  /** Rows read again from their stores, in place of those stores' rows. */
  rows: NewRecording[];
  /** Every store the index names: rows of any other store are dropped. */
  keep: string[];
  /** Stores not read again because the index kept them as the catalogue has them: their rows move to `sourceCommit`. */
  unchanged: string[];
  /** The index's commit, recorded as the one the catalogue is whole at (none for a copy without one). */
  sourceCommit: string | null;
}

/**
 * Writes `change` to the rows of `datasetId` and records the catalogue whole at its commit, in one
 * transaction: a row keeps its own commit unless it was read again or its store is `unchanged`.
 */
export async function replaceRecordings(db: Kysely<Database>, datasetId: string, change: CatalogueChange, now: Date): Promise<void> {
  const { rows, keep, unchanged, sourceCommit } = change;
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
    if (sourceCommit !== null && unchanged.length > 0) {
      await trx
        .updateTable('recordings')
        .set({ source_commit: sourceCommit })
        .where('dataset_id', '=', datasetId)
        .where(sql<boolean>`zarr = any(${sql.val(unchanged)}::text[])`)
        .execute();
    }
    if (sourceCommit !== null) {
      await trx
        .insertInto('catalogue_syncs')
        .values({ dataset_id: datasetId, source_commit: sourceCommit, synced_at: now })
        .onConflict((oc) => oc.column('dataset_id').doUpdateSet({ source_commit: sourceCommit, synced_at: now }))
        .execute();
    }
    await refreshFences(trx, [datasetId]);
  });
}

/**
 * Forgets, and returns, the commit whose index the dataset's catalogue was last read from whole. A sync
 * forgets it before it reads, and `replaceRecordings` records the new one with the rows: a sync that fails,
 * or dies with its process, leaves none, and the catalogue is then read whole again.
 */
export async function forgetCatalogueSync(db: Kysely<Database>, datasetId: string): Promise<string | undefined> {
  const row = await db.deleteFrom('catalogue_syncs').where('dataset_id', '=', datasetId).returning('source_commit').executeTakeFirst();
  return row?.source_commit;
}

/** For every dataset whose catalogue is whole, the commit whose index it was read from. */
export async function catalogueSyncs(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db.selectFrom('catalogue_syncs').select(['dataset_id', 'source_commit']).execute();
  return new Map(rows.map((r) => [r.dataset_id, r.source_commit]));
}

/**
 * Rebuilds the fences (`recording_facets`, `recording_terms`, `recording_ranges`, `recording_words`) of `datasetIds` from their
 * rows; the SQL is the migrations' function, so one definition serves the catalogue, the backfill and the bench.
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

/** `%text%`, LIKE's own characters escaped. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The words of `q`: each row must contain every one (ILIKE `%word%`). */
function wordPatterns(q: string | undefined): string[] {
  return (q ?? '').split(/\s+/).filter(Boolean).map(containing);
}

/**
 * What the terms fence (`recording_terms`, split at white space, `/`, `_`, `.` and `-`) is asked for `q`:
 * the parts of its words between those characters, each of which lies inside one term of a matching
 * dataset. A part under three characters is left out: a trigram index cannot narrow it, and its rows are
 * tested on the walk alone.
 */
export function termPatterns(q: string | undefined): string[] {
  const parts = (q ?? '').split(/[\s\u0085\u180e/_.-]+/).filter((part) => [...part].length >= 3);
  return [...new Set(parts)].map(containing);
}

/** Where a round of candidates starts: at the cursor's dataset (inclusive) or after the last round's. */
interface CandidatesFrom {
  id: string;
  inclusive: boolean;
}

/**
 * The datasets whose recordings may match `filters` (decision 0023), readable by `user` and admitted by the
 * fence of every filter, in id order from `from`, at most `batch`: `undefined` when nothing narrows (an admin's
 * unfiltered list walks the whole catalogue). Each fence is joined, not tested by EXISTS: it holds at most one
 * row a dataset and value, so the planner may drive the walk from any of them in dataset order (the value
 * index of `recording_facets` is ordered by dataset within a value) and stop at the batch's end, for a rare
 * value as for a common one.
 */
function candidateDatasets(db: Kysely<Database>, user: User | undefined, filters: RecordingFilters) {
  const joins: RawBuilder<unknown>[] = [];
  const where: RawBuilder<unknown>[] = [];
  if (filters.dataset) where.push(sql`d.id = ${filters.dataset}`);
  const facet = (kind: string, test: (f: RawBuilder<unknown>) => RawBuilder<unknown>) => {
    const f = sql.id(`f${joins.length}`);
    joins.push(sql`join recording_facets ${f} on ${f}.dataset_id = d.id and ${f}.kind = ${kind} and ${test(f)}`);
  };
  for (const key of ['subject', 'session', 'task', 'run', 'datatype'] as const) {
    const value = filters[key];
    if (value !== undefined) facet(key, (f) => sql`${f}.value = ${value}`);
  }
  // A join a label: PostgreSQL's planning time grows steeply with them (64 took 2.6 s to plan, 160 took 14 s), so
  // only the first few fence the datasets; each row is still checked for every label (`rowConditions`).
  for (const label of [...new Set(filters.channel ?? [])].slice(0, FENCED_CHANNEL_LABELS)) facet('channel', (f) => sql`${f}.value = ${label}`);
  if (filters.channel_type) facet('channel_type', (f) => sql`${f}.value = ${filters.channel_type!.toUpperCase()}`);
  if (filters.event_type) facet('event_type', (f) => sql`${f}.value = ${filters.event_type}`);
  if (filters.rate !== undefined) facet('rate', (f) => sql`${f}.num = ${filters.rate}::float8`);
  // A bound admits the datasets whose greatest (for a least bound) or least (for a greatest) value meets it.
  const ranges: RawBuilder<unknown>[] = [];
  if (filters.rate_min !== undefined) ranges.push(sql`g.rate_greatest >= ${filters.rate_min}::float8`);
  if (filters.rate_max !== undefined) ranges.push(sql`g.rate_least <= ${filters.rate_max}::float8`);
  if (filters.channels_min !== undefined) ranges.push(sql`g.channels_greatest >= ${filters.channels_min}`);
  if (filters.channels_max !== undefined) ranges.push(sql`g.channels_least <= ${filters.channels_max}`);
  if (filters.duration_min !== undefined) ranges.push(sql`g.duration_greatest >= ${filters.duration_min}::float8`);
  if (filters.duration_max !== undefined) ranges.push(sql`g.duration_least <= ${filters.duration_max}::float8`);
  if (ranges.length > 0) joins.push(sql`join recording_ranges g on g.dataset_id = d.id and ${sql.join(ranges, sql` and `)}`);
  const terms = termPatterns(filters.q).map((pattern) => sql`w.terms ilike ${pattern}`);
  if (terms.length > 0) joins.push(sql`join recording_terms w on w.dataset_id = d.id and ${sql.join(terms, sql` and `)}`);
  if (isAdmin(user) && joins.length === 0 && where.length === 0) return undefined;
  return (from: CandidatesFrom | undefined, batch: number) => {
    const after = from ? [sql`d.id ${sql.raw(from.inclusive ? '>=' : '>')} ${from.id}`] : [];
    return sql<{ id: string }>`
      select d.id from (${readableDatasetsQuery(db, readerOf(user))}) d ${sql.join(joins, sql` `)}
      where ${allOf([...where, ...after] as RawBuilder<boolean>[])}
      order by d.id limit ${batch}`.execute(db);
  };
}

/** Candidate datasets read in the first round of a page; each further round reads four times more. */
const FIRST_BATCH = 64;

/**
 * One page of the recordings `user` may read that match `filters`, in (dataset, store) order, in rounds:
 * the next candidate datasets in id order, a batch at a time (the planner weighs the fences: a value few
 * datasets hold is read from its fence's index and the few sorted, one most hold by walking the datasets in
 * order and probing each one's fence until the batch is full), then their recordings walked in primary-key
 * order, each row tested against every filter, until the page is full. A value most datasets hold fills the
 * page in the first round, so the candidates are never all read.
 */
export async function listRecordingRows(
  db: Kysely<Database>,
  user: User | undefined,
  filters: RecordingFilters,
  page: { limit: number; after?: CatalogueCursor },
): Promise<RecordingPageRow[]> {
  if (!candidateDatasets(db, user, filters)) return pageOf(db, filters, page);
  return db.transaction().execute(async (trx) => {
    const candidates = candidateDatasets(trx, user, filters)!;
    const rows: RecordingPageRow[] = [];
    let from: CandidatesFrom | undefined = page.after ? { id: page.after.dataset_id, inclusive: true } : undefined;
    for (let batch = FIRST_BATCH; ; batch *= 4) {
      await walkSettings(trx, 'fences');
      const ids = (await candidates(from, batch)).rows.map((d) => d.id);
      if (ids.length === 0) return rows;
      await walkSettings(trx, 'walk');
      rows.push(...(await pageOf(trx, filters, { limit: page.limit - rows.length, ...(from?.inclusive && page.after ? { after: page.after } : {}) }, ids)));
      if (rows.length >= page.limit || ids.length < batch) return rows;
      from = { id: ids.at(-1)!, inclusive: false };
    }
  });
}

/**
 * What the planner is told for each step (`set_config(..., true)`: until the transaction ends). The walk over a
 * batch of candidates is an ordered scan of the primary key that stops at the page's last row; the planner
 * cannot know the candidates (a parameter it does not look into, so that it plans no per-id work) and would
 * rather read all their rows by a bitmap, or the whole table, and sort: both are left out. The fences are small
 * tables, which the planner would rather scan whole than read through an index (the terms' trigram index
 * costs it more than a scan of 10,000 rows, which takes tens of milliseconds of ILIKE): scans are left out,
 * bitmaps (the trigram index is read by bitmap scans only) are not; and merge joins, which walk every visible
 * dataset up to a rare value's last (`subject=p03`: 8,000 rows for 40), where a walk of the value's index in
 * dataset order, probing each dataset, stops at the batch's end for a common value as for a rare one.
 */
async function walkSettings(db: Kysely<Database>, step: 'fences' | 'walk'): Promise<void> {
  const bitmaps = step === 'walk' ? 'off' : 'on';
  const merges = step === 'walk' ? 'on' : 'off';
  await sql`select set_config('enable_bitmapscan', ${bitmaps}, true), set_config('enable_seqscan', 'off', true), set_config('enable_mergejoin', ${merges}, true)`.execute(db);
}

async function pageOf(
  db: Kysely<Database>,
  filters: RecordingFilters,
  page: { limit: number; after?: CatalogueCursor },
  candidates?: string[],
): Promise<RecordingPageRow[]> {
  let q = db.selectFrom('recordings as r').select(PAGE_COLUMNS).where(allOf(rowConditions(filters, page.after)));
  if (candidates) q = q.where(sql<boolean>`r.dataset_id = any((select ${sql.val(candidates)}::text[])::text[])`);
  return (await q.orderBy('r.dataset_id').orderBy('r.zarr').limit(page.limit).execute()) as RecordingPageRow[];
}

/** Every filter's test of a row (`recordings as r`), and the cursor's. */
function rowConditions(filters: RecordingFilters, after: CatalogueCursor | undefined): RawBuilder<boolean>[] {
  const where: RawBuilder<boolean>[] = [];
  if (filters.dataset) where.push(sql`r.dataset_id = ${filters.dataset}`);
  for (const key of ['subject', 'session', 'task', 'run', 'datatype'] as const) {
    const value = filters[key];
    if (value !== undefined) where.push(sql`${sql.ref(`r.${key}`)} = ${value}`);
  }
  if (filters.rate !== undefined) where.push(sql`${filters.rate}::float8 = any(r.rates)`);
  if (filters.rate_min !== undefined) where.push(sql`${filters.rate_min}::float8 <= any(r.rates)`);
  if (filters.rate_max !== undefined) where.push(sql`${filters.rate_max}::float8 >= any(r.rates)`);
  if (filters.channels_min !== undefined) where.push(sql`r.n_channels >= ${filters.channels_min}`);
  if (filters.channels_max !== undefined) where.push(sql`r.n_channels <= ${filters.channels_max}`);
  if (filters.duration_min !== undefined) where.push(sql`r.duration_s >= ${filters.duration_min}`);
  if (filters.duration_max !== undefined) where.push(sql`r.duration_s <= ${filters.duration_max}`);
  if (filters.channel && filters.channel.length > 0) where.push(sql`r.channel_labels @> ${sql.val(filters.channel)}::text[]`);
  if (filters.channel_type) where.push(sql`${filters.channel_type.toUpperCase()} = any(r.channel_types)`);
  if (filters.event_type) where.push(sql`${filters.event_type} = any(r.trial_types)`);
  for (const pattern of wordPatterns(filters.q)) where.push(sql`r.search_text ilike ${pattern}`);
  if (after) where.push(sql`(r.dataset_id, r.zarr) > (${after.dataset_id}, ${after.zarr})`);
  return where;
}

/** The conditions joined by `and`; true when there are none. */
const allOf = (where: RawBuilder<boolean>[]) => (where.length > 0 ? sql<boolean>`${sql.join(where, sql` and `)}` : sql<boolean>`true`);

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
