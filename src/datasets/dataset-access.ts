/**
 * Who may see and change a dataset: the one rule. A caller's standing towards a dataset (`standingOf`) is an
 * administrator, its owner, a member with a role (decision 0028), anyone (public dataset) or nobody; each right
 * needs a standing. A private dataset is invisible to everyone without one: they get `dataset_not_found`
 * (404), never 403, so a private id cannot be probed. A caller who sees the dataset but lacks the right gets 403.
 */
import type { Kysely } from 'kysely';
import { hasRole, isAccountUsable } from '../accounts/account-gates.js';
import { findUserById } from '../accounts/users.js';
import { isSignInLive, type SignIn } from '../accounts/sign-in-of-credential.js';
import type { User } from '../db/accounts-tables.js';
import type { DatasetRow, MemberRole } from '../db/datasets-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { findDatasetRow, findDatasetWithOwner, findDatasetWithRole, holdDatasetRow, type Dataset } from './dataset-queries.js';
import { findMemberRole } from './dataset-members-queries.js';

export const DATASET_ID = /^(nd|sb)\d{6}$/;

/** What a caller is to a dataset, strongest first; `public` is anyone at a public dataset, `none` sees nothing. */
export type Standing = 'admin' | 'owner' | MemberRole | 'public' | 'none';

/**
 * What a standing allows:
 * - `read`: the dataset wherever it is read (pages, viewer, catalogue, signal, events, windows, git, downloads);
 * - `annotate`: write annotations (an annotator edits their own);
 * - `maintain`: upload, push, edit metadata, request publication, commit annotations, edit anyone's
 *   annotations and manage members;
 * - `own`: what only the owner and admins do (the dataset's visibility and owner; deletion is the admins').
 */
export type DatasetRight = 'read' | 'annotate' | 'maintain' | 'own';

const RIGHTS: Record<Standing, readonly DatasetRight[]> = {
  admin: ['read', 'annotate', 'maintain', 'own'],
  owner: ['read', 'annotate', 'maintain', 'own'],
  maintainer: ['read', 'annotate', 'maintain'],
  annotator: ['read', 'annotate'],
  reader: ['read'],
  public: ['read'],
  none: [],
};

export function allows(standing: Standing, right: DatasetRight): boolean {
  return RIGHTS[standing].includes(right);
}

/** The dataset with its owner's username; `undefined` for an id of another shape or no such dataset. */
export function findDataset(db: Kysely<Database>, id: string): Promise<Dataset | undefined> {
  if (!DATASET_ID.test(id)) return Promise.resolve(undefined);
  return findDatasetWithOwner(db, id);
}

export function isAdmin(user: User | undefined): boolean {
  return !!user && hasRole(user, 'admin');
}

/** The standing of `user`, holding `role` in `dataset` (`undefined`: no member). */
function standingFrom(user: User | undefined, dataset: Pick<DatasetRow, 'visibility' | 'owner_id'>, role: MemberRole | undefined): Standing {
  if (user && isAdmin(user)) return 'admin';
  if (user && user.id === dataset.owner_id) return 'owner';
  if (role) return role;
  return dataset.visibility === 'public' ? 'public' : 'none';
}

/**
 * The caller's standing towards `dataset`, found before; the member row is read only when nothing else settles it.
 * A caller who has yet to find the dataset asks `findDatasetAndStanding` instead: reading the members only once the
 * dataset is found takes longer for an existing id than for an unknown one.
 */
export async function standingOf(db: Kysely<Database>, user: User | undefined, dataset: Pick<DatasetRow, 'id' | 'visibility' | 'owner_id'>): Promise<Standing> {
  const settled = !user || isAdmin(user) || user.id === dataset.owner_id;
  return standingFrom(user, dataset, settled ? undefined : await findMemberRole(db, dataset.id, user.id));
}

/**
 * The dataset `id` (`undefined` for an id of another shape or no such dataset) and the caller's standing towards it
 * (`none` without a dataset). The database does the same work whether the dataset exists or not: one statement,
 * which for a signed-in caller reads their membership beside the dataset, keyed by the id asked
 * (`findDatasetWithRole`). So neither the statements nor their time tell a private id from an unknown one.
 */
export async function findDatasetAndStanding(db: Kysely<Database>, id: string, user: User | undefined): Promise<{ dataset: Dataset | undefined; standing: Standing }> {
  if (!DATASET_ID.test(id)) return { dataset: undefined, standing: 'none' };
  const { dataset, role } = user ? await findDatasetWithRole(db, id, user.id) : { dataset: await findDatasetWithOwner(db, id), role: undefined };
  return { dataset, standing: dataset ? standingFrom(user, dataset, role) : 'none' };
}

/** Whether `user` may read `dataset`: public, or theirs as owner, member or administrator. */
export async function canSee(db: Kysely<Database>, user: User | undefined, dataset: Pick<DatasetRow, 'id' | 'visibility' | 'owner_id'>): Promise<boolean> {
  return allows(await standingOf(db, user, dataset), 'read');
}

function notFound(id: string): NdsError {
  return new NdsError('dataset_not_found', { message: `No dataset ${id}.` });
}

const REFUSALS: Record<Exclude<DatasetRight, 'read'>, string> = {
  annotate: 'Only annotators, maintainers and the owner of %s, or an administrator, may annotate it.',
  maintain: 'Only maintainers and the owner of %s, or an administrator, may do this.',
  own: 'Only the owner of %s or an administrator may do this.',
};

/**
 * The dataset and the caller's standing when the standing grants `right`. A caller who may not read it gets
 * `dataset_not_found`, whether it exists or not; one who reads it but lacks the right gets `forbidden` (403).
 */
export async function datasetFor(db: Kysely<Database>, id: string, user: User | undefined, right: DatasetRight): Promise<{ dataset: Dataset; standing: Standing }> {
  const { dataset, standing } = await findDatasetAndStanding(db, id, user);
  if (!dataset || !allows(standing, 'read')) throw notFound(id);
  if (right !== 'read' && !allows(standing, right)) throw new NdsError('forbidden', { message: REFUSALS[right].replace('%s', id) });
  return { dataset, standing };
}

/**
 * `datasetFor` asked inside the transaction `trx`, with the dataset's row locked until it ends, so that the answer
 * still holds when the transaction's writes land. Changes of who holds the dataset (members added, moved,
 * removed) lock it exclusively (`change`); writes that only a holder may make lock it shared (`write`). So a
 * removal waits for the writes that asked before it, and a write that asks after it sees it: without this, a
 * write checked a moment before a removal landed after the removal had answered (and a maintainer being
 * removed could put themselves back).
 */
export async function datasetForWhile(trx: Kysely<Database>, id: string, user: User | undefined, right: DatasetRight, lock: 'write' | 'change'): Promise<{ dataset: Dataset; standing: Standing }> {
  if (DATASET_ID.test(id)) await holdDatasetRow(trx, id, lock === 'change' ? 'exclusive' : 'shared');
  return datasetFor(trx, id, user, right);
}

/** The dataset when `user` may see it; otherwise `dataset_not_found`, whether it exists or not. */
export async function visibleDataset(db: Kysely<Database>, id: string, user: User | undefined): Promise<Dataset> {
  return (await datasetFor(db, id, user, 'read')).dataset;
}

/**
 * Whether a credential minted for `userId` (null: minted for anyone) under `signIn` reads dataset `id` now:
 * the dataset exists and the account, as it is now, may read it (`standingOf`: a member removed reads no
 * more), through a sign-in that still lives (`isSignInLive`: a deleted key, an ended session read what anyone
 * reads). A revoked, pending or conflicted account reads what anyone reads. Download credentials, signed read
 * URLs and read grants carry the account and the sign-in they were minted under and ask this on every use, so
 * none outlives the dataset's publicity, its existence, its holder's access or the key that asked for it.
 */
export async function mayStillRead(db: Kysely<Database>, id: string, userId: number | null, signIn: SignIn | undefined, now: Date): Promise<boolean> {
  if (!DATASET_ID.test(id)) return false;
  const dataset = await findDatasetRow(db, id);
  if (!dataset) return false;
  if (dataset.visibility === 'public') return true;
  if (userId === null) return false;
  const user = await holderNow(db, userId, signIn, now);
  return !!user && (await canSee(db, user, dataset));
}

/** The account a credential was minted for, when it is usable and the sign-in named with it still lives. */
async function holderNow(db: Kysely<Database>, userId: number, signIn: SignIn | undefined, now: Date): Promise<User | undefined> {
  const [user, live] = await Promise.all([findUserById(db, userId), signIn === undefined || isSignInLive(db, userId, signIn, now)]);
  return user && live && isAccountUsable(user) ? user : undefined;
}

/**
 * Whether the account `userId` may still upload to the dataset `id` (what `uploadableDataset` allows), through
 * `signIn` when the credential names one: asked at every write with upload credentials, so that none outlives
 * its holder's access (a member removed, an account revoked, the dataset deleted) or its key.
 */
export async function mayStillUpload(db: Kysely<Database>, id: string, userId: number | null, signIn: SignIn | undefined, now: Date): Promise<boolean> {
  if (!DATASET_ID.test(id) || userId === null) return false;
  const user = await holderNow(db, userId, signIn, now);
  if (!user) return false;
  return uploadableDataset(db, id, user).then(
    () => true,
    (err: unknown) => {
      if (err instanceof NdsError) return false;
      throw err;
    },
  );
}

/** The dataset when `user` maintains it (owner, maintainer or admin); a visible dataset of someone else answers 403. */
export async function maintainableDataset(db: Kysely<Database>, id: string, user: User): Promise<Dataset> {
  return (await datasetFor(db, id, user, 'maintain')).dataset;
}

/**
 * Whether an account may create or fill a real (non-sandbox) dataset: it needs upload access (approved)
 * and a completed sandbox training. Admins, and service accounts (machines that cannot take a training),
 * are exempt from the training.
 */
export function assertMayUseRealDatasets(user: User): void {
  if (isAdmin(user)) return;
  if (user.status !== 'approved') throw new NdsError('upload_access_required');
  if (user.sandbox_completed_at === null && user.kind !== 'service') throw new NdsError('sandbox_required');
}

/**
 * Uploads and versions: the owner, a maintainer or an admin. For a real dataset the owner still needs upload
 * access; a maintainer's membership is their upload access for that dataset (decision 0028).
 */
export async function uploadableDataset(db: Kysely<Database>, id: string, user: User): Promise<Dataset> {
  const { dataset, standing } = await datasetFor(db, id, user, 'maintain');
  if (!dataset.sandbox && standing === 'owner') assertMayUseRealDatasets(user);
  return dataset;
}
