/**
 * Every read and write of `datasets` rows: the one module that queries the table, so its columns, locks and
 * timestamps are handled in one place (`test/architecture/table-owners.test.ts` holds the rest of `src/`
 * to it; only the search SQL of `search*.ts` composes its own queries over it). Each function takes `db`
 * first, and a transaction is a `db`, so the caller decides what runs together. Writes that move
 * `updated_at` take `now` from the caller's clock.
 */
import { sql, type ExpressionBuilder, type Insertable, type Kysely } from 'kysely';
import type { DatasetRow, DatasetsTable, MemberRole, RecordingFacts, Visibility, ZarrStatus } from '../db/datasets-tables.js';
import type { Database } from '../db/types.js';
import { memberDatasetIds, memberRoleOf } from './dataset-members-queries.js';

/** A dataset row with its owner's username, as the API's dataset queries return it. */
export type Dataset = DatasetRow & { owner_username: string };

function datasetsWithOwner(db: Kysely<Database>) {
  return db.selectFrom('datasets').innerJoin('users', 'users.id', 'datasets.owner_id').selectAll('datasets').select('users.username as owner_username');
}

export function findDatasetWithOwner(db: Kysely<Database>, id: string): Promise<Dataset | undefined> {
  return datasetsWithOwner(db).where('datasets.id', '=', id).executeTakeFirst();
}

/**
 * The dataset with its owner's username, and the role `userId` holds in it, in one statement that does the same work
 * whether the dataset exists or not: the membership is looked up by the id asked, beside the dataset's row rather
 * than after it, so the time of an answer does not tell a private id from an unknown one (`dataset-access.ts`).
 */
export async function findDatasetWithRole(db: Kysely<Database>, id: string, userId: number): Promise<{ dataset: Dataset | undefined; role: MemberRole | undefined }> {
  // One row always: `one` drives left joins of the dataset (and its owner) and of the membership, each keyed by the id.
  const row = await db
    .selectFrom(sql<{ one: number }>`(select 1 as one)`.as('one'))
    .leftJoin('datasets', (join) => join.on('datasets.id', '=', id))
    .leftJoin('users', 'users.id', 'datasets.owner_id')
    .leftJoin(memberRoleOf(db, id, userId).as('member'), (join) => join.onTrue())
    .selectAll('datasets')
    .select(['users.username as owner_username', 'member.role as member_role'])
    .executeTakeFirstOrThrow();
  const { member_role: role, ...dataset } = row;
  // The left join makes every column nullable; a found row has its id, and every column as the table holds it.
  return { dataset: dataset.id === null ? undefined : (dataset as Dataset), role: role ?? undefined };
}

export function findDatasetRow(db: Kysely<Database>, id: string): Promise<DatasetRow | undefined> {
  return db.selectFrom('datasets').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function datasetExists(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.selectFrom('datasets').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** Which of `ids` name a dataset that exists (one statement). */
export async function existingDatasetIds(db: Kysely<Database>, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return (await db.selectFrom('datasets').select('id').where('id', 'in', ids).execute()).map((r) => r.id);
}

/** The dataset's visibility; `undefined` when there is no such dataset. */
export async function datasetVisibility(db: Kysely<Database>, id: string): Promise<Visibility | undefined> {
  return (await db.selectFrom('datasets').select('visibility').where('id', '=', id).executeTakeFirst())?.visibility;
}

/**
 * Locks the dataset's row until the transaction `trx` ends, so writers of one dataset's versions queue up.
 * Throws when there is no such dataset. `FOR NO KEY UPDATE`, as `holdDatasetRow`'s exclusive hold: writes of
 * rows referencing the dataset are not blocked, so they cannot deadlock with it.
 */
export async function lockDatasetRow(trx: Kysely<Database>, id: string): Promise<void> {
  await trx.selectFrom('datasets').select('id').where('id', '=', id).forNoKeyUpdate().executeTakeFirstOrThrow();
}

/**
 * Locks the dataset's row until the transaction `trx` ends, `shared` with other such holders or exclusively;
 * nothing when there is no such dataset. Exclusively is `FOR NO KEY UPDATE`, not `FOR UPDATE`: it excludes every
 * other holder, but not the `FOR KEY SHARE` lock with which a write of a row referencing the dataset checks its
 * foreign key. `FOR UPDATE` blocked that check, and a holder whose own statements then waited for the referencing
 * row (the visibility trigger writes the `copy_exposures` row a worker had just inserted) deadlocked with it.
 */
export async function holdDatasetRow(trx: Kysely<Database>, id: string, mode: 'shared' | 'exclusive'): Promise<void> {
  const row = trx.selectFrom('datasets').select('id').where('id', '=', id);
  await (mode === 'shared' ? row.forShare() : row.forNoKeyUpdate()).executeTakeFirst();
}

/**
 * The condition "`userId` may read the row" of `datasets`: public, theirs, or one they are a member of. The
 * SQL form of `canSee` (`dataset-access.ts`) without the administrators, whom callers let through before.
 */
function readableBy(db: Kysely<Database>, userId: number | undefined) {
  return (eb: ExpressionBuilder<Database & { datasets: DatasetsTable }, 'datasets'>) =>
    userId !== undefined
      ? eb.or([eb('datasets.visibility', '=', 'public'), eb('datasets.owner_id', '=', userId), eb('datasets.id', 'in', memberDatasetIds(db, userId))])
      : eb('datasets.visibility', '=', 'public');
}

/** Pages of datasets, newest id first: `owned` ones of `userId`, or `visible` ones (public, theirs, or shared with them). */
export function listDatasetRows(db: Kysely<Database>, options: { scope: 'visible' | 'owned'; userId: number | undefined; beforeId?: string; limit: number }): Promise<Dataset[]> {
  const { userId } = options;
  let q = datasetsWithOwner(db);
  if (options.scope === 'owned') {
    q = q.where('datasets.owner_id', '=', userId ?? -1);
  } else {
    q = q.where(readableBy(db, userId));
  }
  if (options.beforeId) q = q.where('datasets.id', '<', options.beforeId);
  return q.orderBy('datasets.id', 'desc').limit(options.limit).execute();
}

/** Public datasets, `userId`'s own and those shared with them, most recently created first (the dataset pages). */
export function listRecentVisibleDatasets(db: Kysely<Database>, userId: number | undefined, limit: number): Promise<Dataset[]> {
  return datasetsWithOwner(db)
    .where(readableBy(db, userId)).orderBy('datasets.created_at', 'desc').orderBy('datasets.id', 'desc').limit(limit).execute();
}

/** Datasets whose `source_repo` ends in `/<repo>`, `/<repo>.git` or `:<repo>.git` (`repo` is `owner/name`), by id. */
export function findDatasetsBySourceRepo(db: Kysely<Database>, repo: string): Promise<Dataset[]> {
  const tail = escapeLike(repo);
  return datasetsWithOwner(db)
    .where((eb) => eb.or([eb('datasets.source_repo', 'like', `%/${tail}`), eb('datasets.source_repo', 'like', `%/${tail}.git`), eb('datasets.source_repo', 'like', `%:${tail}.git`)]))
    .orderBy('datasets.id')
    .execute();
}

/** Datasets that list `externalId` among their external ids, by id. */
export function findDatasetsByExternalId(db: Kysely<Database>, externalId: string): Promise<Dataset[]> {
  return datasetsWithOwner(db)
    .where((eb) => eb(eb.val(externalId), '=', eb.fn.any('datasets.external_ids')))
    .orderBy('datasets.id')
    .execute();
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The dataset (other than `exceptId`) that already claims `externalId`, with who may see it; `undefined` when none does. */
export async function datasetClaimingExternalId(
  db: Kysely<Database>,
  externalId: string,
  exceptId: string | undefined,
): Promise<Pick<DatasetRow, 'id' | 'visibility' | 'owner_id'> | undefined> {
  let q = db.selectFrom('datasets').select(['id', 'visibility', 'owner_id']).where((eb) => eb(eb.val(externalId), '=', eb.fn.any('external_ids')));
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.executeTakeFirst();
}

/** The dataset whose `source_repo` or `external_ids` names one of `keys` (already normalized, lower case). */
export async function findDatasetsByRepository(db: Kysely<Database>, keys: string[]): Promise<DatasetRow[]> {
  if (keys.length === 0) return [];
  // Every dataset converting from the repository (anyone may convert a public repository, and none of them
  // may take another's pushes away); only when none does, the one that names it among its external ids.
  const { rows } = await sql<DatasetRow & { by_source: boolean }>`
    select * from (
      select *, rtrim(regexp_replace(lower(coalesce(source_repo, '')), '\\.git$', ''), '/') = any(${keys}::text[]) as by_source
      from datasets
    ) d
    where by_source or exists (select 1 from unnest(external_ids) e where lower(e) = any(${keys}::text[]))
    order by id`.execute(db);
  const bySource = rows.filter((r) => r.by_source);
  return (bySource.length > 0 ? bySource : rows.slice(0, 1)).map(({ by_source: _, ...row }) => row as DatasetRow);
}

/** Names of the datasets among `ids` (a missing one is left out). */
export async function datasetNames(db: Kysely<Database>, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('datasets').select(['id', 'name']).where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

export interface SandboxDatasetSummary {
  id: string;
  name: string;
  latest_version: string | null;
  zarr_status: string | null;
}

/** The sandbox datasets of an account, by id. */
export function listSandboxDatasets(db: Kysely<Database>, ownerId: number): Promise<SandboxDatasetSummary[]> {
  return db.selectFrom('datasets').select(['id', 'name', 'latest_version', 'zarr_status']).where('owner_id', '=', ownerId).where('sandbox', '=', true).orderBy('id').execute();
}

/** Every dataset an account owns, with whether it is a sandbox one (what its storage quota counts). */
export function datasetsOwnedBy(db: Kysely<Database>, ownerId: number): Promise<Array<Pick<DatasetRow, 'id' | 'sandbox'>>> {
  return db.selectFrom('datasets').select(['id', 'sandbox']).where('owner_id', '=', ownerId).execute();
}

export async function countSandboxDatasets(db: Kysely<Database>, ownerId: number): Promise<number> {
  const { held } = await db.selectFrom('datasets').select((eb) => eb.fn.countAll<string>().as('held')).where('owner_id', '=', ownerId).where('sandbox', '=', true).executeTakeFirstOrThrow();
  return Number(held);
}

export async function insertDatasetRow(db: Kysely<Database>, row: Insertable<DatasetsTable>): Promise<void> {
  await db.insertInto('datasets').values(row).execute();
}

/** The descriptive fields a PATCH may change (and `visibility`, which only an admin moves to private). */
export type DatasetFieldChanges = Partial<Pick<DatasetRow, 'name' | 'description' | 'keywords' | 'license' | 'authors' | 'source_repo' | 'external_ids' | 'visibility'>>;

export async function updateDatasetFields(db: Kysely<Database>, id: string, changes: DatasetFieldChanges, now: Date): Promise<void> {
  await db.updateTable('datasets').set({ ...changes, updated_at: now }).where('id', '=', id).execute();
}

/** Sets `source_repo` (the hosted repository a first push created). */
export async function setSourceRepo(db: Kysely<Database>, id: string, sourceRepo: string): Promise<void> {
  await db.updateTable('datasets').set({ source_repo: sourceRepo }).where('id', '=', id).execute();
}

/** Deletes the row (versions, requests and jobs go with it by ON DELETE CASCADE); false when there was none. */
export async function deleteDatasetRow(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.deleteFrom('datasets').where('id', '=', id).returning('id').executeTakeFirst()) !== undefined;
}

/** Records the dataset's latest version (by semver precedence) and its size. */
export async function setLatestVersion(db: Kysely<Database>, id: string, latest: { version: string; sizeBytes: number }, now: Date): Promise<void> {
  await db.updateTable('datasets').set({ latest_version: latest.version, size_bytes: latest.sizeBytes, updated_at: now }).where('id', '=', id).execute();
}

export async function setPublicationPending(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('datasets').set({ publication_status: 'pending' }).where('id', '=', id).execute();
}

/** An approved publication: the dataset becomes public with its DOIs. */
export async function markPublished(db: Kysely<Database>, id: string, dois: { doi: string; conceptDoi: string }, now: Date): Promise<void> {
  await db.updateTable('datasets').set({ visibility: 'public', publication_status: 'published', doi: dois.doi, concept_doi: dois.conceptDoi, updated_at: now }).where('id', '=', id).execute();
}

/** A denied request: a dataset never published is left `denied`; one published before stays `published`. */
export async function settleDeniedPublication(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('datasets').set({ publication_status: 'denied' }).where('id', '=', id).where('publication_status', '=', 'pending').where('doi', 'is', null).execute();
  await db.updateTable('datasets').set({ publication_status: 'published' }).where('id', '=', id).where('doi', 'is not', null).execute();
}

export async function setConceptDoi(db: Kysely<Database>, id: string, conceptDoi: string): Promise<void> {
  await db.updateTable('datasets').set({ concept_doi: conceptDoi }).where('id', '=', id).execute();
}

/**
 * Stores what the Zarr index tells search: the facet columns, `metadata.recording`, and `n_subjects` when
 * nobody set it. The trigger `datasets_search_vector` re-indexes the row.
 */
export async function setRecordingFacts(db: Kysely<Database>, id: string, facts: RecordingFacts): Promise<void> {
  await db
    .updateTable('datasets')
    .set({
      modalities: facts.modalities,
      tasks: facts.tasks,
      sampling_rates: facts.sampling_rates,
      channel_counts: facts.channel_counts,
      metadata: sql`metadata || jsonb_build_object('recording', ${JSON.stringify(facts)}::jsonb)`,
      n_subjects: sql`coalesce(n_subjects, ${facts.n_subjects > 0 ? facts.n_subjects : null}::integer)`,
    })
    .where('id', '=', id)
    .execute();
}

/** The Zarr copy's state as the admin routes report it. */
export type ZarrState = Pick<DatasetRow, 'id' | 'visibility' | 'zarr_status' | 'zarr_converted_at' | 'zarr_store_count' | 'zarr_index_etag' | 'zarr_source_commit' | 'zarr_error'>;

export function findZarrState(db: Kysely<Database>, id: string): Promise<ZarrState | undefined> {
  return db
    .selectFrom('datasets')
    .select(['id', 'visibility', 'zarr_status', 'zarr_converted_at', 'zarr_store_count', 'zarr_index_etag', 'zarr_source_commit', 'zarr_error'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Datasets for a sweep (backfill), by id: those of one visibility, or all. */
export function listZarrStates(db: Kysely<Database>, visibility: Visibility | 'all'): Promise<Array<Pick<DatasetRow, 'id' | 'visibility' | 'zarr_status' | 'zarr_source_commit'>>> {
  let q = db.selectFrom('datasets').select(['id', 'visibility', 'zarr_status', 'zarr_source_commit']).orderBy('id');
  if (visibility !== 'all') q = q.where('visibility', '=', visibility);
  return q.execute();
}

/** Moves `zarr_status` alone (a conversion dispatched, started or failed). */
/** A conversion's state; `error` (why it failed as a whole, shown to the owner) is kept with `failed` only. */
export async function setZarrStatus(db: Kysely<Database>, id: string, status: ZarrStatus, now: Date, error?: string): Promise<void> {
  const zarrError = status === 'failed' ? (error ?? null) : null;
  await db.updateTable('datasets').set({ zarr_status: status, zarr_error: zarrError, updated_at: now }).where('id', '=', id).execute();
}

/**
 * Back to `ready` from `pending`, for a dispatch that converted nothing (a push's delivery that found the copy
 * of `main` already): the copy of `zarr_source_commit` is what is served. Any other status was set since, and
 * stays.
 */
export async function settlePendingAsReady(db: Kysely<Database>, id: string, now: Date): Promise<void> {
  await db
    .updateTable('datasets')
    .set({ zarr_status: 'ready', updated_at: now })
    .where('id', '=', id)
    .where('zarr_status', '=', 'pending')
    .where('zarr_source_commit', 'is not', null)
    .execute();
}

/** A finished conversion: the copy is ready, from `commit`, with its store count and index entity tag. */
export async function setZarrReady(db: Kysely<Database>, id: string, ready: { commit: string; storeCount: number; indexEtag: string | null }, now: Date): Promise<void> {
  await db
    .updateTable('datasets')
    .set({ zarr_status: 'ready', zarr_converted_at: now, zarr_store_count: ready.storeCount, zarr_index_etag: ready.indexEtag, zarr_source_commit: ready.commit, zarr_error: null, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/**
 * Moves the recorded entity tag of `index.json` from `from` to `to` (a sweep rewrote its `data_base`); a
 * conversion that recorded another one since keeps its own.
 */
export async function replaceZarrIndexEtag(db: Kysely<Database>, id: string, from: string, to: string): Promise<void> {
  await db.updateTable('datasets').set({ zarr_index_etag: to }).where('id', '=', id).where('zarr_index_etag', '=', from).execute();
}

/**
 * The ids of the datasets a user may read, as a subquery for other tables' filters (`where dataset_id in
 * (...)`): public ones, the user's own and those shared with them; `undefined` for an admin, who may read
 * every dataset.
 */
export function readableDatasetIds(db: Kysely<Database>, user: { id: number; admin: boolean } | undefined) {
  if (user?.admin) return undefined;
  return db.selectFrom('datasets').select('datasets.id').where(readableBy(db, user?.id));
}

/**
 * The ids of the datasets `user` may read (every one for an admin), as a query of `datasets as d` that a
 * caller narrows further: the recording catalogue adds its fences to it (decision 0023).
 */
export function readableDatasetsQuery(db: Kysely<Database>, user: { id: number; admin: boolean } | undefined) {
  const q = db.selectFrom('datasets as d').select('d.id');
  if (user?.admin) return q;
  // The same rule as readableBy: public, the user's own, and those shared with them (decision 0028).
  return user
    ? q.where((eb) => eb.or([eb('d.visibility', '=', 'public'), eb('d.owner_id', '=', user.id), eb('d.id', 'in', memberDatasetIds(db, user.id))]))
    : q.where('d.visibility', '=', 'public');
}

/**
 * Datasets whose last conversion failed as a whole or could not convert some recordings (the count recorded
 * in `metadata.recording.failure_count`), most recently converted first: the administrators' page.
 */
export function listDatasetsWithConversionFailures(db: Kysely<Database>, limit: number): Promise<Dataset[]> {
  return datasetsWithOwner(db)
    .where((eb) => eb.or([eb('datasets.zarr_status', '=', 'failed'), eb(sql<number>`coalesce((datasets.metadata->'recording'->>'failure_count')::numeric, 0)`, '>', 0)]))
    .orderBy(sql`coalesce(datasets.zarr_converted_at, datasets.updated_at)`, 'desc')
    .orderBy('datasets.id', 'desc')
    .limit(limit)
    .execute();
}
