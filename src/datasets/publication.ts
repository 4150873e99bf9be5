/**
 * Publication requests (docs/datasets.md): the owner asks to publish the latest version → `pending` → an admin
 * approves (DOIs minted or updated, dataset made public) or denies with a reason. One pending request a
 * dataset at a time (a partial unique index, so concurrent requests cannot both win), and a request is
 * decided once (compare-and-set on `pending`).
 */
import type { Kysely } from 'kysely';
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { User } from '../db/accounts-tables.js';
import type { PublicationRequest, PublicationStatus } from '../db/publication-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { findDataset, manageableDataset } from './dataset-access.js';
import { datasetNames, markPublished, setPublicationPending, settleDeniedPublication, type Dataset } from './dataset-queries.js';
import { assertMetadataComplete, registerConceptDoi, registerVersionDoi } from './publication-doi.js';
import { announceVisibilityChanged } from './update-dataset.js';

/** A request with the names a person reads (dataset name, who asked, who decided). */
export type PublicationRequestView = PublicationRequest & { dataset_name: string; requested_by_username: string | null; decided_by_username: string | null };

function requestsWithPeople(db: Kysely<Database>) {
  return db
    .selectFrom('publication_requests as r')
    .leftJoin('users as rq', 'rq.id', 'r.requested_by')
    .leftJoin('users as dc', 'dc.id', 'r.decided_by')
    .selectAll('r')
    .select(['rq.username as requested_by_username', 'dc.username as decided_by_username']);
}

/** Adds each request's dataset name (the datasets table has its own owner); a request of no dataset is dropped. */
async function withDatasetNames(db: Kysely<Database>, rows: Array<Omit<PublicationRequestView, 'dataset_name'>>): Promise<PublicationRequestView[]> {
  const names = await datasetNames(db, rows.map((r) => r.dataset_id));
  return rows.flatMap((r) => {
    const name = names.get(r.dataset_id);
    return name === undefined ? [] : [{ ...r, dataset_name: name }];
  });
}

async function requestView(db: Kysely<Database>, requestId: number): Promise<PublicationRequestView> {
  const row = await requestsWithPeople(db).where('r.id', '=', requestId).executeTakeFirstOrThrow();
  return (await withDatasetNames(db, [row]))[0];
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === '23505';
}

export async function requestPublication(deps: Pick<Deps, 'db'>, actor: Actor, id: string, message?: string): Promise<PublicationRequestView> {
  const d = await manageableDataset(deps.db, id, actor.user);
  if (d.sandbox) throw new NdsError('not_publishable', { message: `${id} is a sandbox dataset; sandbox datasets are for practice and are never published.` });
  if (!d.latest_version) throw new NdsError('not_publishable', { message: `${id} has no version yet; create a version, then request publication.`, details: ['version: none'] });
  assertMetadataComplete(d);
  let created: PublicationRequest;
  try {
    created = await deps.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('publication_requests')
        .values({ dataset_id: id, version: d.latest_version!, status: 'pending', requested_by: actor.user.id, message: message ?? null })
        .returningAll()
        .executeTakeFirstOrThrow();
      await setPublicationPending(trx, id);
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new NdsError('publication_pending', { message: `${id} already has a pending publication request; wait for an administrator's decision.` });
    throw err;
  }
  return requestView(deps.db, created.id);
}

export interface PublicationState {
  dataset: Dataset;
  requests: PublicationRequestView[];
}

/** The dataset's publication fields and its requests, newest first (owner and admins). */
export async function publicationState(deps: Pick<Deps, 'db'>, user: User, id: string): Promise<PublicationState> {
  const dataset = await manageableDataset(deps.db, id, user);
  const requests = await withDatasetNames(deps.db, await requestsWithPeople(deps.db).where('r.dataset_id', '=', id).orderBy('r.id', 'desc').execute());
  return { dataset, requests };
}

export async function listPublicationRequests(deps: Pick<Deps, 'db'>, status: PublicationStatus | undefined, limit: number): Promise<PublicationRequestView[]> {
  let q = requestsWithPeople(deps.db);
  if (status) q = q.where('r.status', '=', status);
  return withDatasetNames(deps.db, await q.orderBy('r.id', 'desc').limit(limit).execute());
}

async function pendingRequest(db: Kysely<Database>, requestId: number): Promise<PublicationRequest> {
  const r = await db.selectFrom('publication_requests').selectAll().where('id', '=', requestId).executeTakeFirst();
  if (!r) throw new NdsError('request_not_found', { message: `No publication request ${requestId}.` });
  if (r.status !== 'pending') throw new NdsError('publication_not_pending', { message: `Publication request ${requestId} was already ${r.status}.` });
  return r;
}

/** Marks the request decided, only if it is still pending; false when another decision got there first. */
async function decide(db: Kysely<Database>, requestId: number, actor: Actor, status: 'approved' | 'denied', fields: { reason?: string; doi?: string }, now: Date): Promise<boolean> {
  const r = await db
    .updateTable('publication_requests')
    .set({ status, decided_by: actor.user.id, decided_at: now, reason: fields.reason ?? null, doi: fields.doi ?? null })
    .where('id', '=', requestId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Approves: mints (or updates) the concept DOI and mints the version's DOI, then, in one transaction,
 * decides the request and makes the dataset public. DOIs come first: if the provider fails nothing is
 * decided and the admin can retry (registration of the same DOI names is idempotent).
 */
export async function approvePublication(deps: Pick<Deps, 'db' | 'config' | 'clock' | 'hooks' | 'log'>, actor: Actor, requestId: number): Promise<PublicationRequestView> {
  const request = await pendingRequest(deps.db, requestId);
  const d = (await findDataset(deps.db, request.dataset_id))!;
  const concept = await registerConceptDoi(deps, d, 'publish');
  const doi = await registerVersionDoi(deps, d, request.version, concept);
  const wasPublic = d.visibility === 'public';
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    if (!(await decide(trx, requestId, actor, 'approved', { doi }, now))) {
      throw new NdsError('publication_not_pending', { message: `Publication request ${requestId} was decided by someone else meanwhile.` });
    }
    await markPublished(trx, d.id, { doi, conceptDoi: concept }, now);
    await audit(trx, actor, 'publication.approve', d.id, { request_id: requestId, version: request.version, doi, concept_doi: concept });
  });
  // The gateway cached "not public" for this dataset; it must ask again.
  if (!wasPublic) await announceVisibilityChanged(deps, d.id);
  return requestView(deps.db, requestId);
}

export async function denyPublication(deps: Pick<Deps, 'db' | 'clock'>, actor: Actor, requestId: number, reason: string): Promise<PublicationRequestView> {
  const request = await pendingRequest(deps.db, requestId);
  await deps.db.transaction().execute(async (trx) => {
    if (!(await decide(trx, requestId, actor, 'denied', { reason }, deps.clock.now()))) {
      throw new NdsError('publication_not_pending', { message: `Publication request ${requestId} was decided by someone else meanwhile.` });
    }
    // A dataset published before keeps its status; only a first request leaves it denied.
    await settleDeniedPublication(trx, request.dataset_id);
    await audit(trx, actor, 'publication.deny', request.dataset_id, { request_id: requestId, reason });
  });
  return requestView(deps.db, requestId);
}
