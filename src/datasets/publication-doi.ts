/**
 * DOIs of a dataset: the concept DOI (all versions, `<prefix>/nds.<id>`) and one DOI a published version
 * (`<prefix>/nds.<id>.v<version>`). Every DOI registered is recorded in `doi_records` with its provider
 * and the metadata sent, whichever provider registered it, before the provider hears of it: a record is what
 * makes a DOI nds's own to update. An approval's DOIs are drafts until it committed (decision 0057); the drafts of
 * an approval refused because its dataset was deleted are deleted again (`withdrawDrafts`), and so are those earlier
 * refused approvals left when the dataset is deleted (`draftDois`, read before the records go with it).
 */
import { sql, type Kysely } from 'kysely';
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { DoiRecord } from '../db/publication-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { isForeignKeyViolation } from '../db/sql-errors.js';
import { NdsError } from '../core/errors.js';
import { findDataset } from './dataset-access.js';
import { setConceptDoi, type Dataset } from './dataset-queries.js';
import { doiAttributes, missingMetadata, type DoiAttributes } from './doi/doi-metadata.js';
import { conceptDoi, versionDoi, type DoiEvent, type DoiProvider } from './doi/doi-provider.js';
import { openDoiProvider } from './doi/open-doi-provider.js';

type DoiDeps = Pick<Deps, 'db' | 'config' | 'clock'>;

/** The names a registration created at the provider (`mint` answered `created`), in order, as soon as each exists. */
export type MadeDois = string[];

/** The provider of this configuration: DataCite when DATACITE_* is set, else the test provider. */
export function doiProvider(deps: Pick<Deps, 'config'>): DoiProvider {
  return openDoiProvider(deps.config);
}

export function assertMetadataComplete(d: Dataset): void {
  const missing = missingMetadata(d);
  if (missing.length) {
    throw new NdsError('metadata_incomplete', {
      message: `${d.id} cannot get a DOI yet: its metadata is incomplete.`,
      details: missing,
      extra: { missing: missing.map((m) => m.split(':')[0]) },
    });
  }
}

function landingUrl(deps: DoiDeps, id: string, version?: string): string {
  return `${deps.config.publicUrl}/datasets/${id}${version ? `?version=${encodeURIComponent(version)}` : ''}`;
}

async function record(deps: DoiDeps, provider: DoiProvider, row: DoiClaim): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .insertInto('doi_records')
    .values({ ...row, provider: provider.name, test: provider.test, metadata: JSON.stringify(row.metadata), created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('doi').doUpdateSet({ url: row.url, metadata: JSON.stringify(row.metadata), updated_at: now }))
    .execute();
}

interface DoiClaim {
  doi: string;
  dataset_id: string;
  kind: 'concept' | 'version';
  version: string | null;
  url: string;
  metadata: DoiAttributes;
}

/** A DOI nds registered, with the metadata it sent: what an approval makes findable once it committed. */
export interface HeldDoi {
  doi: string;
  attributes: DoiAttributes;
}

/**
 * Records `row` in `doi_records` before DataCite hears of it, so that a retry after a lost answer knows the name
 * is nds's own. True when this call made the record; false when nds held it already. Refuses a name nds holds
 * for another version or dataset: DOI names ignore case (DOI Handbook 2.4), so `…v1.0.0-RC.1` is `…v1.0.0-rc.1`.
 */
async function claimDoi(deps: DoiDeps, provider: DoiProvider, row: DoiClaim): Promise<boolean> {
  const held = await deps.db.selectFrom('doi_records').selectAll().where(sql<string>`lower(doi)`, '=', row.doi.toLowerCase()).executeTakeFirst();
  if (held && (held.doi !== row.doi || held.dataset_id !== row.dataset_id || held.kind !== row.kind || held.version !== row.version)) {
    throw new NdsError('conflict', { message: `${row.doi} is the DOI of ${held.dataset_id}${held.version ? ` version ${held.version}` : ''} already (DOI names ignore case); nothing was registered.` });
  }
  const now = deps.clock.now();
  const metadata = JSON.stringify(row.metadata);
  try {
    const made = await deps.db
      .insertInto('doi_records')
      .values({ ...row, provider: provider.name, test: provider.test, metadata, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('doi').doNothing())
      .returning('doi')
      .executeTakeFirst();
    if (made) return true;
  } catch (err) {
    if (isForeignKeyViolation(err)) throw new NdsError('dataset_not_found', { message: `${row.dataset_id} was deleted meanwhile; no DOI was registered.`, cause: err });
    throw err;
  }
  await deps.db.updateTable('doi_records').set({ url: row.url, metadata, updated_at: now }).where('doi', '=', row.doi).execute();
  return false;
}

/**
 * Registers `row` at the provider (a draft when `event` is left out). A name DataCite has already is updated
 * only when nds recorded it before this call for the same dataset and version: otherwise it is someone else's.
 * A name this call created is added to `made`.
 */
async function registerDoi(deps: DoiDeps, provider: DoiProvider, row: DoiClaim, event?: DoiEvent, made?: MadeDois): Promise<HeldDoi> {
  const claimedNow = await claimDoi(deps, provider, row);
  const outcome = await provider.mint(row.doi, row.metadata, event);
  if (outcome === 'created') made?.push(row.doi);
  if (outcome === 'taken') {
    if (claimedNow) {
      await deps.db.deleteFrom('doi_records').where('doi', '=', row.doi).execute();
      throw new NdsError('conflict', { message: `${row.doi} is registered at DataCite already, but not by nds for ${row.dataset_id}${row.version ? ` version ${row.version}` : ''}; nothing was changed.` });
    }
    await provider.update(row.doi, row.metadata, event);
  }
  return { doi: row.doi, attributes: row.metadata };
}

async function registerConcept(deps: DoiDeps, provider: DoiProvider, d: Dataset, event?: DoiEvent, made?: MadeDois): Promise<HeldDoi> {
  const doi = d.concept_doi ?? conceptDoi(provider.prefix, d.id);
  const url = landingUrl(deps, d.id);
  const attributes = doiAttributes(d, { url, publisher: publisherOf(deps), year: deps.clock.now().getUTCFullYear() });
  const row: DoiClaim = { doi, dataset_id: d.id, kind: 'concept', version: null, url, metadata: attributes };
  if (!d.concept_doi) return registerDoi(deps, provider, row, event, made);
  await provider.update(doi, attributes, event);
  await record(deps, provider, row);
  return { doi, attributes };
}

/** Registers (or refreshes) the concept DOI of a dataset and records it on the dataset. */
export async function registerConceptDoi(deps: DoiDeps, d: Dataset, event: DoiEvent): Promise<string> {
  assertMetadataComplete(d);
  const { doi } = await registerConcept(deps, doiProvider(deps), d, event);
  await setConceptDoi(deps.db, d.id, doi);
  return doi;
}

/** The concept and version DOIs of an approval, registered before it commits. */
export interface PublicationDois {
  concept: HeldDoi;
  version: HeldDoi;
}

/**
 * Registers an approval's DOIs without making them findable: a new DOI is a draft, one registered before keeps
 * its state. Nothing here marks the dataset; `makeFindable` follows once the approval committed, so an approval
 * refused meanwhile (the dataset deleted or made private) leaves nothing findable. A retry updates them. Each
 * DOI this call creates is added to `made` as soon as it exists, so that a caller may withdraw them even when
 * this call throws after the first.
 */
export async function registerPublicationDois(deps: DoiDeps, d: Dataset, version: string, made: MadeDois = []): Promise<PublicationDois> {
  assertMetadataComplete(d);
  const provider = doiProvider(deps);
  const concept = await registerConcept(deps, provider, d, undefined, made);
  const doi = versionDoi(provider.prefix, d.id, version);
  const url = landingUrl(deps, d.id, version);
  const attributes = doiAttributes(d, { url, publisher: publisherOf(deps), year: deps.clock.now().getUTCFullYear(), version, conceptDoi: concept.doi });
  const held = await registerDoi(deps, provider, { doi, dataset_id: d.id, kind: 'version', version, url, metadata: attributes }, undefined, made);
  return { concept, version: held };
}

/**
 * Deletes at the provider the drafts `made` of a dataset once it is gone: those an approval created, when it did
 * not commit because the dataset was deleted meanwhile, or those `draftDois` found when it was deleted. No
 * approval will ask for those names again (dataset ids come from a sequence), and DataCite never gives a deleted
 * name out again (https://support.datacite.org/docs/fabrica-delete-doi); while the dataset exists, nothing is
 * deleted: its drafts stay, recorded, for its next approval to reuse. Never throws: a draft that could not be
 * deleted is logged and stays a draft, which resolves nowhere (decision 0057).
 */
export async function withdrawDrafts(deps: Pick<Deps, 'db' | 'config' | 'log'>, datasetId: string, made: readonly string[]): Promise<void> {
  if (made.length === 0) return;
  try {
    if (await findDataset(deps.db, datasetId)) return;
  } catch (err) {
    deps.log.warn({ err, dataset: datasetId, dois: made }, 'could not tell whether a refused approval\'s draft DOIs may be deleted; they stay drafts');
    return;
  }
  const provider = doiProvider(deps);
  for (const doi of made) {
    try {
      await provider.deleteDraft(doi);
    } catch (err) {
      deps.log.warn({ err, dataset: datasetId, doi }, 'a draft DOI of a deleted dataset could not be deleted; it stays at the provider');
    }
  }
}

/**
 * The DOIs nds recorded for dataset `id` at the configured provider that only an approval which did not commit
 * made: drafts at the provider, or names it never got. Not the dataset's DOI or concept DOI (set by a committed
 * approval, or registered by an administrator), nor the DOI of an approved request: nds made those registered or
 * findable, or meant to (a `publish` that failed after its approval committed), and never deletes them. Read it in
 * the transaction that deletes the dataset, under its row lock: the records go with the row.
 */
export async function draftDois(trx: Kysely<Database>, config: Deps['config'], id: string): Promise<string[]> {
  const d = await findDataset(trx, id);
  if (!d) return [];
  // DOI names ignore case (DOI Handbook 2.4).
  const published = new Set([d.doi, d.concept_doi, ...(await approvedRequestDois(trx, id))].filter((doi) => doi !== null).map((doi) => doi.toLowerCase()));
  const records = await trx
    .selectFrom('doi_records')
    .select('doi')
    .where('dataset_id', '=', id)
    .where('provider', '=', doiProvider({ config }).name)
    .orderBy('created_at')
    .orderBy('doi')
    .execute();
  return records.map((r) => r.doi).filter((doi) => !published.has(doi.toLowerCase()));
}

/** Sends DataCite's `publish` event for each DOI: they become findable. Throws `upstream_failed`. */
export async function makeFindable(deps: Pick<Deps, 'config'>, dois: HeldDoi[]): Promise<void> {
  const provider = doiProvider(deps);
  for (const held of dois) await provider.update(held.doi, held.attributes, 'publish');
}

function publisherOf(deps: Pick<Deps, 'config'>): string {
  return `Neuro Dataset Service (${new URL(deps.config.publicUrl).host})`;
}

export interface DoiInfo {
  dataset_id: string;
  doi: string | null;
  concept_doi: string | null;
  provider: DoiProvider['name'];
  test: boolean;
  records: DoiRecord[];
}

export async function doiInfo(deps: DoiDeps, id: string): Promise<DoiInfo> {
  const d = await findDataset(deps.db, id);
  if (!d) throw new NdsError('dataset_not_found', { message: `No dataset ${id}.` });
  const records = await deps.db.selectFrom('doi_records').selectAll().where('dataset_id', '=', id).orderBy('created_at').orderBy('doi').execute();
  const provider = doiProvider(deps);
  return { dataset_id: id, doi: d.doi, concept_doi: d.concept_doi, provider: provider.name, test: provider.test, records };
}

/** `POST /admin/datasets/:id/doi/concept`: mints the concept DOI, or refreshes the one it has. */
export async function mintConceptDoi(deps: DoiDeps, actor: Actor, id: string): Promise<DoiInfo & { created: boolean }> {
  const d = await findDataset(deps.db, id);
  if (!d) throw new NdsError('dataset_not_found', { message: `No dataset ${id}.` });
  const created = d.concept_doi === null;
  // A private dataset's DOI is registered but not findable until publication.
  const doi = await registerConceptDoi(deps, d, d.visibility === 'public' ? 'publish' : 'register');
  await audit(deps.db, actor, created ? 'doi.concept' : 'doi.concept_refresh', id, { doi });
  return { ...(await doiInfo(deps, id)), created };
}

/** `POST /admin/datasets/:id/doi/update`: sends the dataset's current metadata for each of its DOIs. */
export async function updateDois(deps: DoiDeps, actor: Actor, id: string): Promise<DoiInfo & { updated: string[] }> {
  const d = await findDataset(deps.db, id);
  if (!d) throw new NdsError('dataset_not_found', { message: `No dataset ${id}.` });
  if (!d.concept_doi) throw new NdsError('doi_not_minted', { message: `${id} has no DOI yet; mint its concept DOI first.` });
  assertMetadataComplete(d);
  const provider = doiProvider(deps);
  const updated: string[] = [];
  const records = await deps.db.selectFrom('doi_records').selectAll().where('dataset_id', '=', id).orderBy('doi').execute();
  // The DOIs a committed approval made findable are sent `publish` again: this repairs one whose `publish`
  // failed after its approval committed. Drafts of approvals refused meanwhile stay drafts.
  const findable = d.visibility === 'public' ? await approvedDois(deps, id, d.concept_doi) : new Set<string>();
  for (const r of records) {
    const attributes = doiAttributes(d, {
      url: r.url,
      publisher: publisherOf(deps),
      year: new Date(r.created_at).getUTCFullYear(),
      ...(r.kind === 'version' && { version: r.version!, conceptDoi: d.concept_doi }),
    });
    await provider.update(r.doi, attributes, findable.has(r.doi) ? 'publish' : undefined);
    await record(deps, provider, { doi: r.doi, dataset_id: id, kind: r.kind, version: r.version, url: r.url, metadata: attributes });
    updated.push(r.doi);
  }
  await audit(deps.db, actor, 'doi.update', id, { dois: updated.join(' ') });
  return { ...(await doiInfo(deps, id)), updated };
}

async function approvedDois(deps: DoiDeps, id: string, concept: string): Promise<Set<string>> {
  return new Set([concept, ...(await approvedRequestDois(deps.db, id))]);
}

/** The version DOIs of the dataset's approved requests. */
async function approvedRequestDois(db: Kysely<Database>, id: string): Promise<string[]> {
  const rows = await db.selectFrom('publication_requests').select('doi').where('dataset_id', '=', id).where('status', '=', 'approved').where('doi', 'is not', null).execute();
  return rows.map((r) => r.doi!);
}
