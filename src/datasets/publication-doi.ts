/**
 * DOIs of a dataset: the concept DOI (all versions, `<prefix>/nds.<id>`) and one DOI a published version
 * (`<prefix>/nds.<id>.v<version>`). Every DOI registered is recorded in `doi_records` with its provider
 * and the metadata sent, whichever provider registered it.
 */
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { DoiRecord } from '../db/publication-tables.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { findDataset } from './dataset-access.js';
import { setConceptDoi, type Dataset } from './dataset-queries.js';
import { doiAttributes, missingMetadata } from './doi/doi-metadata.js';
import { conceptDoi, versionDoi, type DoiEvent, type DoiProvider } from './doi/doi-provider.js';
import { openDoiProvider } from './doi/open-doi-provider.js';

type DoiDeps = Pick<Deps, 'db' | 'config' | 'clock'>;

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

async function record(deps: DoiDeps, provider: DoiProvider, row: { doi: string; dataset_id: string; kind: 'concept' | 'version'; version: string | null; url: string; metadata: unknown }): Promise<void> {
  const now = deps.clock.now();
  await deps.db
    .insertInto('doi_records')
    .values({ ...row, provider: provider.name, test: provider.test, metadata: JSON.stringify(row.metadata), created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('doi').doUpdateSet({ url: row.url, metadata: JSON.stringify(row.metadata), updated_at: now }))
    .execute();
}

/** Registers (or refreshes) the concept DOI of a dataset and records it on the dataset. */
export async function registerConceptDoi(deps: DoiDeps, d: Dataset, event: DoiEvent): Promise<string> {
  assertMetadataComplete(d);
  const provider = doiProvider(deps);
  const doi = d.concept_doi ?? conceptDoi(provider.prefix, d.id);
  const url = landingUrl(deps, d.id);
  const attributes = doiAttributes(d, { url, publisher: publisherOf(deps), year: deps.clock.now().getUTCFullYear() });
  if (d.concept_doi) await provider.update(doi, attributes, event);
  else await provider.mint(doi, attributes, event);
  await record(deps, provider, { doi, dataset_id: d.id, kind: 'concept', version: null, url, metadata: attributes });
  await setConceptDoi(deps.db, d.id, doi);
  return doi;
}

/** Registers the DOI of one version (a retry updates it), linked to the concept DOI. */
export async function registerVersionDoi(deps: DoiDeps, d: Dataset, version: string, concept: string): Promise<string> {
  const provider = doiProvider(deps);
  const doi = versionDoi(provider.prefix, d.id, version);
  const url = landingUrl(deps, d.id, version);
  const attributes = doiAttributes(d, { url, publisher: publisherOf(deps), year: deps.clock.now().getUTCFullYear(), version, conceptDoi: concept });
  await provider.mint(doi, attributes, 'publish');
  await record(deps, provider, { doi, dataset_id: d.id, kind: 'version', version, url, metadata: attributes });
  return doi;
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
  for (const r of records) {
    const attributes = doiAttributes(d, {
      url: r.url,
      publisher: publisherOf(deps),
      year: new Date(r.created_at).getUTCFullYear(),
      ...(r.kind === 'version' && { version: r.version!, conceptDoi: d.concept_doi }),
    });
    await provider.update(r.doi, attributes);
    await record(deps, provider, { doi: r.doi, dataset_id: id, kind: r.kind, version: r.version, url: r.url, metadata: attributes });
    updated.push(r.doi);
  }
  await audit(deps.db, actor, 'doi.update', id, { dois: updated.join(' ') });
  return { ...(await doiInfo(deps, id)), updated };
}
