/**
 * Who may see and change a dataset. A private dataset is invisible to everyone but its owner and admins:
 * they get `dataset_not_found` (404), never 403, so a private id cannot be probed.
 */
import type { Kysely } from 'kysely';
import { hasRole, isAccountUsable } from '../accounts/account-gates.js';
import { findUserById } from '../accounts/users.js';
import type { User } from '../db/accounts-tables.js';
import type { DatasetRow } from '../db/datasets-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { findDatasetRow, findDatasetWithOwner, type Dataset } from './dataset-queries.js';

export const DATASET_ID = /^(nd|sb)\d{6}$/;

/** The dataset with its owner's username; `undefined` for an id of another shape or no such dataset. */
export function findDataset(db: Kysely<Database>, id: string): Promise<Dataset | undefined> {
  if (!DATASET_ID.test(id)) return Promise.resolve(undefined);
  return findDatasetWithOwner(db, id);
}

export function isAdmin(user: User | undefined): boolean {
  return !!user && hasRole(user, 'admin');
}

export function canSee(user: User | undefined, dataset: Pick<DatasetRow, 'visibility' | 'owner_id'>): boolean {
  return dataset.visibility === 'public' || (!!user && (user.id === dataset.owner_id || isAdmin(user)));
}

export function canManage(user: User | undefined, dataset: DatasetRow): boolean {
  return !!user && (user.id === dataset.owner_id || isAdmin(user));
}

function notFound(id: string): NdsError {
  return new NdsError('dataset_not_found', { message: `No dataset ${id}.` });
}

/** The dataset when `user` may see it; otherwise `dataset_not_found`, whether it exists or not. */
export async function visibleDataset(db: Kysely<Database>, id: string, user: User | undefined): Promise<Dataset> {
  const dataset = await findDataset(db, id);
  if (!dataset || !canSee(user, dataset)) throw notFound(id);
  return dataset;
}

/**
 * Whether a credential minted for `userId` (null: minted for anyone) reads dataset `id` now: the dataset
 * exists and `canSee` lets the account, as it is now, see it. A revoked, pending or conflicted account reads
 * what anyone reads. Download credentials, signed read URLs and read grants carry the account they were
 * minted for and ask this on every use, so none outlives the dataset's publicity, its existence or its
 * holder's access.
 */
export async function mayStillRead(db: Kysely<Database>, id: string, userId: number | null): Promise<boolean> {
  if (!DATASET_ID.test(id)) return false;
  const dataset = await findDatasetRow(db, id);
  if (!dataset) return false;
  if (dataset.visibility === 'public') return true;
  if (userId === null) return false;
  const user = await findUserById(db, userId);
  return !!user && isAccountUsable(user) && canSee(user, dataset);
}

/** The dataset when `user` owns it or is an admin; a visible dataset of someone else answers 403. */
export async function manageableDataset(db: Kysely<Database>, id: string, user: User): Promise<Dataset> {
  const dataset = await visibleDataset(db, id, user);
  if (!canManage(user, dataset)) throw new NdsError('forbidden', { message: `Only the owner of ${id} or an administrator may do this.` });
  return dataset;
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

/** Uploads and versions: the owner or an admin; for a real dataset the owner still needs upload access. */
export async function uploadableDataset(db: Kysely<Database>, id: string, user: User): Promise<Dataset> {
  const dataset = await manageableDataset(db, id, user);
  if (!dataset.sandbox && !isAdmin(user)) assertMayUseRealDatasets(user);
  return dataset;
}
