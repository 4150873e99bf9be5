/**
 * Upload access, as a request between people: a person asks (the administrators get a mail), an
 * administrator grants it or denies it with a reason (the person gets a mail either way). The decision is in
 * the audit log; a denial closes the request, and the person may ask again.
 */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { notify } from '../mail/mailer.js';
import { approveUser, audit, listUsers, type Actor } from './admin-users.js';
import { uploadAccessApprovedMail, uploadAccessDeniedMail, uploadAccessRequestedMail } from './request-mails.js';
import { administratorAddresses, closeUploadAccessRequest, getUserByUsername, recordUploadAccessRequest } from './users.js';

type MailingDeps = Pick<Deps, 'db' | 'clock' | 'config' | 'mailer' | 'log'>;

/** Records the request (the first time only) and tells the administrators; the user as it now is. */
export async function requestUploadAccess(deps: MailingDeps, user: User): Promise<User> {
  const updated = await recordUploadAccessRequest(deps.db, user, deps.clock.now());
  const isNew = user.upload_access_requested_at === null && updated.upload_access_requested_at !== null;
  if (isNew && updated.status !== 'approved') {
    const admins = await administratorAddresses(deps.db);
    await notify(deps, admins.map((to) => uploadAccessRequestedMail(deps.config.publicUrl, to, updated)));
  }
  return updated;
}

/** Open requests: verified accounts that asked and were not decided yet, oldest first. */
export async function pendingUploadAccessRequests(db: Kysely<Database>, limit = 500): Promise<User[]> {
  const { users } = await listUsers(db, { requests: true, limit, offset: 0 });
  return users.sort((a, b) => new Date(a.upload_access_requested_at!).getTime() - new Date(b.upload_access_requested_at!).getTime());
}

/** Grants upload access; the person is told when this changes their access. */
export async function grantUploadAccess(deps: MailingDeps, actor: Actor, username: string): Promise<User> {
  const before = await getUserByUsername(deps.db, username);
  const updated = await approveUser(deps.db, actor, username, deps.clock.now());
  if (before.status !== 'approved') await notify(deps, [uploadAccessApprovedMail(deps.config.publicUrl, updated.email, updated.username)]);
  return updated;
}

/** Denies an open request with a reason the person reads (closing it: they may ask again). */
export async function denyUploadAccess(deps: MailingDeps, actor: Actor, username: string, reason: string): Promise<User> {
  const target = await getUserByUsername(deps.db, username);
  if (target.upload_access_requested_at === null || target.status !== 'verified') {
    throw new NdsError('conflict', { message: `${username} has no open request for upload access.` });
  }
  const updated = await deps.db.transaction().execute(async (trx) => {
    const row = await closeUploadAccessRequest(trx, target, deps.clock.now());
    if (!row) throw new NdsError('conflict', { message: `The request of ${username} was decided by someone else meanwhile.` });
    await audit(trx, actor, 'user.deny_upload_access', username, { reason });
    return row;
  });
  await notify(deps, [uploadAccessDeniedMail(deps.config.publicUrl, updated.email, updated.username, reason)]);
  return updated;
}
