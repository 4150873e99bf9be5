/**
 * Publication requests (docs/datasets.md): the owner asks to publish the latest version → `pending` → an admin
 * approves (DOIs minted or updated, dataset made public) or denies with a reason. One pending request a
 * dataset at a time (a partial unique index, so concurrent requests cannot both win), and a request is
 * decided once (compare-and-set on `pending`). The administrators get a mail of each request (and the owner,
 * when a maintainer asked); the owner and the asker one of each decision. A pending request carries the
 * recordings the dataset's conversion could not convert. A takedown closes a pending request (`publication-closing.ts`).
 */
import type { Kysely } from 'kysely';
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { User } from '../db/accounts-tables.js';
import type { PublicationRequest, PublicationStatus } from '../db/publication-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { administratorAddresses } from '../accounts/users.js';
import { readConversionFailures, type ConversionFailure } from '../formats/zarr/conversion-failures.js';
import { notify } from '../mail/mailer.js';
import { findDataset, maintainableDataset } from './dataset-access.js';
import { publicationApprovedMail, publicationDeniedMail, publicationRequestedForOwnerMail, publicationRequestedMail } from './publication-mails.js';
import { datasetNames, holdDatasetRow, markPublished, setPublicationPending, settleDeniedPublication, type Dataset } from './dataset-queries.js';
import { assertMetadataComplete, makeFindable, registerPublicationDois, withdrawDrafts, type MadeDois, type PublicationDois } from './publication-doi.js';
import { announceVisibilityChanged } from './update-dataset.js';
import { addressOf, requestsWithPeople } from './publication-requests.js';
import { isUniqueViolation } from '../db/sql-errors.js';

/**
 * A request with the names a person reads (dataset name, who asked, who decided), the asker's address (for
 * the mails, never presented), and, while it is pending, the recordings the dataset's Zarr copy could not
 * convert (null once decided: the copy it was decided on is not kept).
 */
export type PublicationRequestView = PublicationRequest & {
  dataset_name: string;
  requested_by_username: string | null;
  requested_by_email: string | null;
  decided_by_username: string | null;
  failed_recordings: ConversionFailure[] | null;
};

type ViewDeps = Pick<Deps, 'db' | 'objects'>;
type Row = Omit<PublicationRequestView, 'dataset_name' | 'failed_recordings'>;

/**
 * Adds each request's dataset name (the datasets table has its own owner; a request of no dataset is
 * dropped) and, to a pending one, its dataset's failed recordings.
 */
async function presentable(deps: ViewDeps, rows: Row[], withFailures = true): Promise<PublicationRequestView[]> {
  const names = await datasetNames(deps.db, rows.map((r) => r.dataset_id));
  const failures = new Map<string, ConversionFailure[]>();
  const pending = withFailures ? rows.filter((r) => r.status === 'pending') : [];
  for (const id of new Set(pending.map((r) => r.dataset_id))) failures.set(id, (await readConversionFailures(deps, id)) ?? []);
  return rows.flatMap((r) => {
    const name = names.get(r.dataset_id);
    return name === undefined ? [] : [{ ...r, dataset_name: name, failed_recordings: r.status === 'pending' ? (failures.get(r.dataset_id) ?? []) : null }];
  });
}

/** The request as presented; `request_not_found` when it went with its dataset, deleted meanwhile. */
async function requestView(deps: ViewDeps, requestId: number): Promise<PublicationRequestView> {
  const row = await requestsWithPeople(deps.db).where('r.id', '=', requestId).executeTakeFirst();
  const view = row && (await presentable(deps, [row]))[0];
  if (!view) throw new NdsError('request_not_found', { message: `Publication request ${requestId} went with its dataset, deleted meanwhile.` });
  return view;
}

type MailingDeps = ViewDeps & Pick<Deps, 'config' | 'mailer' | 'log'>;

export async function requestPublication(deps: MailingDeps, actor: Actor, id: string, message?: string): Promise<PublicationRequestView> {
  const d = await maintainableDataset(deps.db, id, actor.user);
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
  const view = await requestView(deps, created.id);
  const admins = await administratorAddresses(deps.db);
  const mails = admins.map((to) => publicationRequestedMail(deps.config.publicUrl, to, view, view.failed_recordings ?? []));
  // A maintainer may ask to publish the owner's dataset (decision 0028): the owner hears of it before it happens.
  const owner = d.owner_id === actor.user.id ? undefined : await addressOf(deps.db, d.owner_id);
  if (owner && !admins.includes(owner)) mails.push(publicationRequestedForOwnerMail(deps.config.publicUrl, owner, view));
  await notify(deps, mails);
  return view;
}

export interface PublicationState {
  dataset: Dataset;
  requests: PublicationRequestView[];
}

/** The dataset's publication fields and its requests, newest first (owner, maintainers and admins). */
export async function publicationState(deps: ViewDeps, user: User, id: string): Promise<PublicationState> {
  const dataset = await maintainableDataset(deps.db, id, user);
  const requests = await presentable(deps, await requestsWithPeople(deps.db).where('r.dataset_id', '=', id).orderBy('r.id', 'desc').execute());
  return { dataset, requests };
}

/**
 * Requests newest first, of one status or all. `withFailures: false` leaves each pending request's
 * `failed_recordings` empty instead of reading its dataset's conversion results (a count on the home page).
 */
export async function listPublicationRequests(deps: ViewDeps, status: PublicationStatus | undefined, limit: number, options: { withFailures?: boolean } = {}): Promise<PublicationRequestView[]> {
  let q = requestsWithPeople(deps.db);
  if (status) q = q.where('r.status', '=', status);
  return presentable(deps, await q.orderBy('r.id', 'desc').limit(limit).execute(), options.withFailures ?? true);
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
 * Approves, in three steps. The concept and version DOIs are registered as drafts (a retry updates them); then,
 * in one transaction under the dataset's row lock, the request is decided and the dataset made public, unless it
 * was deleted or its visibility changed while DataCite answered (a takedown closes its pending request, and
 * wins); only after that commit are the DOIs made findable. So a refused approval leaves nothing findable, and
 * when its dataset was deleted, none of the drafts it created (`withdrawDrafts`).
 */
export async function approvePublication(deps: MailingDeps & Pick<Deps, 'clock' | 'hooks'>, actor: Actor, requestId: number): Promise<PublicationRequestView> {
  const request = await pendingRequest(deps.db, requestId);
  const d = await findDataset(deps.db, request.dataset_id);
  if (!d) throw datasetGone(request.dataset_id);
  const made: MadeDois = [];
  let dois: PublicationDois;
  try {
    dois = await registerPublicationDois(deps, d, request.version, made);
    await commitApproval(deps, actor, request, d, dois);
  } catch (err) {
    // The refusal is the answer; a draft that could not be withdrawn is only logged.
    await withdrawDrafts(deps, d.id, made);
    throw err;
  }
  const doi = dois.version.doi;
  // The gateway cached "not public" for this dataset; it must ask again.
  if (d.visibility !== 'public') await announceVisibilityChanged(deps, d.id);
  try {
    await makeFindable(deps, [dois.concept, dois.version]);
  } catch (err) {
    // The approval stands and its DOIs resolve once registered; `POST /admin/datasets/:id/doi/update` lists them.
    deps.log.error({ err, dataset: d.id, doi }, 'publication approved, but its DOIs could not be made findable');
  }
  const view = await requestView(deps, requestId);
  await notify(deps, (await decisionAddresses(deps.db, view, d.owner_id)).map((to) => publicationApprovedMail(deps.config.publicUrl, to, view, doi)));
  return view;
}

/**
 * Decides the request and makes the dataset public in one transaction under the dataset's row lock; refuses
 * (404 or 409) when the dataset was deleted, its visibility changed or the request was decided meanwhile.
 */
async function commitApproval(deps: Pick<Deps, 'db' | 'clock'>, actor: Actor, request: PublicationRequest, d: Dataset, dois: PublicationDois): Promise<void> {
  const requestId = request.id;
  const doi = dois.version.doi;
  const concept = dois.concept.doi;
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await holdDatasetRow(trx, d.id, 'exclusive');
    const current = await findDataset(trx, d.id);
    if (!current) throw datasetGone(d.id);
    if (current.visibility !== d.visibility) {
      throw new NdsError('publication_not_pending', { message: `${d.id} was made ${current.visibility} while request ${requestId} was being approved; nothing was published.` });
    }
    if (!(await decide(trx, requestId, actor, 'approved', { doi }, now))) {
      throw new NdsError('publication_not_pending', { message: `Publication request ${requestId} was decided by someone else meanwhile.` });
    }
    await markPublished(trx, d.id, { doi, conceptDoi: concept }, now);
    await audit(trx, actor, 'publication.approve', d.id, { request_id: requestId, version: request.version, doi, concept_doi: concept });
  });
}

export async function denyPublication(deps: MailingDeps & Pick<Deps, 'clock'>, actor: Actor, requestId: number, reason: string): Promise<PublicationRequestView> {
  const request = await pendingRequest(deps.db, requestId);
  await deps.db.transaction().execute(async (trx) => {
    if (!(await decide(trx, requestId, actor, 'denied', { reason }, deps.clock.now()))) {
      throw new NdsError('publication_not_pending', { message: `Publication request ${requestId} was decided by someone else meanwhile.` });
    }
    // A dataset published before keeps its status; only a first request leaves it denied.
    await settleDeniedPublication(trx, request.dataset_id);
    await audit(trx, actor, 'publication.deny', request.dataset_id, { request_id: requestId, reason });
  });
  const view = await requestView(deps, requestId);
  const owner = (await findDataset(deps.db, request.dataset_id))?.owner_id;
  await notify(deps, (await decisionAddresses(deps.db, view, owner)).map((to) => publicationDeniedMail(deps.config.publicUrl, to, view, reason)));
  return view;
}

function datasetGone(id: string): NdsError {
  return new NdsError('dataset_not_found', { message: `${id} was deleted; nothing was published.` });
}

/** Who hears of a decision: the one who asked and the dataset's owner, once each (docs: "The owner gets a mail either way"). */
async function decisionAddresses(db: Kysely<Database>, view: PublicationRequestView, ownerId: number | undefined): Promise<string[]> {
  const owner = await addressOf(db, ownerId);
  return [...new Set([view.requested_by_email, owner].filter((a): a is string => !!a))];
}
