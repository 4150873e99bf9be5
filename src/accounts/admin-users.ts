/**
 * Administration of accounts: approval, revocation, kind changes and keys of service/test accounts.
 * Every action is written to the audit log with its actor, target and address.
 */
import type { Kysely } from 'kysely';
import type { User, UserKind } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { hasRole } from './account-gates.js';
import { listLiveApiKeys, mintApiKey, revokeAllApiKeys, revokeApiKey, type MintedKey } from './api-keys.js';
import { deleteSessionsOf } from './sessions.js';
import { getUserByUsername } from './users.js';

export interface Actor {
  user: User;
  ip: string;
}

export async function audit(
  db: Kysely<Database>,
  actor: Actor | undefined,
  action: string,
  target: string | null,
  details: Record<string, unknown> = {},
): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      actor_id: actor?.user.id ?? null,
      actor_username: actor?.user.username ?? null,
      action,
      target,
      details: JSON.stringify(details),
      ip: actor?.ip ?? null,
    })
    .execute();
}

export interface UserListFilter {
  status?: User['status'];
  kind?: UserKind;
  role?: User['role'];
  /** Only accounts with an open upload-access request. */
  requests?: boolean;
  limit: number;
  offset: number;
}

export async function listUsers(db: Kysely<Database>, filter: UserListFilter): Promise<{ users: User[]; total: number }> {
  let q = db.selectFrom('users');
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.kind) q = q.where('kind', '=', filter.kind);
  if (filter.role) q = q.where('role', '=', filter.role);
  if (filter.requests) q = q.where('upload_access_requested_at', 'is not', null).where('status', '=', 'verified');
  const [users, total] = await Promise.all([
    q.selectAll().orderBy('id').limit(filter.limit).offset(filter.offset).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { users, total: Number(total.n) };
}

/** Grants upload access to a verified account (status approved, tier uploader). */
export async function approveUser(db: Kysely<Database>, actor: Actor, username: string, now: Date): Promise<User> {
  const target = await getUserByUsername(db, username);
  if (target.status === 'pending') throw new NdsError('account_pending', { message: `${username} has not verified their email yet.` });
  if (target.status === 'revoked') throw new NdsError('conflict', { message: `${username} is revoked; restore the account before approving it.` });
  const updated = await db
    .updateTable('users')
    .set({ status: 'approved', tier: 'uploader', approved_at: target.approved_at ?? now, upload_access_requested_at: null, updated_at: now })
    .where('id', '=', target.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await audit(db, actor, 'user.approve', username, { previous_status: target.status });
  return updated;
}

/** Revokes an account's access: status revoked, every key revoked, every session ended. */
export async function revokeUser(db: Kysely<Database>, actor: Actor, username: string, now: Date): Promise<{ user: User; keysRevoked: number }> {
  const target = await getUserByUsername(db, username);
  if (target.id === actor.user.id) throw new NdsError('forbidden', { message: 'You cannot revoke your own account.' });
  // An admin may not revoke an equal or higher role; the owner may revoke anyone else.
  if (!hasRole(actor.user, 'owner') && hasRole(target, 'admin')) {
    throw new NdsError('owner_required', { message: 'Only the owner may revoke an administrator.' });
  }
  return db.transaction().execute(async (trx) => {
    const user = await trx
      .updateTable('users')
      .set({ status: 'revoked', revoked_at: now, updated_at: now })
      .where('id', '=', target.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const keysRevoked = await revokeAllApiKeys(trx, target.id);
    await deleteSessionsOf(trx, target.id);
    await audit(trx, actor, 'user.revoke', username, { previous_status: target.status, keys_revoked: keysRevoked });
    return { user, keysRevoked };
  });
}

/**
 * Changes an account's kind by compare-and-set on the previous value: `expected` if given, else the value
 * read now. A change that raced another answers 409 `kind_changed`.
 */
export async function changeUserKind(db: Kysely<Database>, actor: Actor, username: string, kind: UserKind, expected: UserKind | undefined, now: Date): Promise<User> {
  const target = await getUserByUsername(db, username);
  const previous = expected ?? target.kind;
  if (target.role === 'owner' && kind !== 'person') throw new NdsError('forbidden', { message: 'The owner account stays a person account.' });
  return db.transaction().execute(async (trx) => {
    const updated = await trx
      .updateTable('users')
      .set({ kind, updated_at: now })
      .where('id', '=', target.id)
      .where('kind', '=', previous)
      .returningAll()
      .executeTakeFirst();
    if (!updated) throw new NdsError('kind_changed', { message: `The kind of ${username} is no longer ${previous}; read it again and retry.` });
    // A service or test account holds only the keys its owner mints: what the person opened or minted ends.
    let keysRevoked = 0;
    if (previous === 'person' && kind !== 'person') {
      await deleteSessionsOf(trx, target.id);
      keysRevoked = await revokeAllApiKeys(trx, target.id, 'admin');
    }
    await audit(trx, actor, 'user.kind', username, { from: previous, to: kind, ...(keysRevoked > 0 && { keys_revoked: keysRevoked }) });
    return keysRevoked > 0 ? await trx.selectFrom('users').selectAll().where('id', '=', target.id).executeTakeFirstOrThrow() : updated;
  });
}

/**
 * Sets the storage limit of `username`'s datasets in place of the settings: `bytes` (0: no limit), or null to
 * go back to the settings. Room already taken stays; past a lowered limit, nothing more is granted.
 */
export async function setStorageQuota(db: Kysely<Database>, actor: Actor, username: string, bytes: number | null, now: Date): Promise<User> {
  const target = await getUserByUsername(db, username);
  // As for revocation: an admin may not limit an equal or higher role.
  if (!hasRole(actor.user, 'owner') && hasRole(target, 'admin')) {
    throw new NdsError('owner_required', { message: "Only the owner may set an administrator's or the owner's storage limit." });
  }
  const updated = await db.updateTable('users').set({ storage_quota_bytes: bytes, updated_at: now }).where('id', '=', target.id).returningAll().executeTakeFirstOrThrow();
  await audit(db, actor, 'user.storage_quota', username, { from: target.storage_quota_bytes === null ? null : Number(target.storage_quota_bytes), to: bytes });
  return updated;
}

function assertMachineAccount(target: User): void {
  if (target.kind === 'person') throw new NdsError('person_account');
}

export async function mintKeyForAccount(db: Kysely<Database>, actor: Actor, username: string, name: string): Promise<MintedKey> {
  const target = await getUserByUsername(db, username);
  assertMachineAccount(target);
  if (target.status === 'revoked') throw new NdsError('account_revoked');
  const minted = await mintApiKey(db, target.id, name, 'admin');
  await audit(db, actor, 'key.mint', username, { key_id: minted.row.id, name });
  return minted;
}

export async function listKeysOfAccount(db: Kysely<Database>, username: string) {
  const target = await getUserByUsername(db, username);
  return listLiveApiKeys(db, target.id);
}

export async function revokeKeyOfAccount(db: Kysely<Database>, actor: Actor, username: string, keyId: number): Promise<void> {
  const target = await getUserByUsername(db, username);
  await revokeApiKey(db, target.id, keyId);
  await audit(db, actor, 'key.revoke', username, { key_id: keyId });
}

export async function listAudit(db: Kysely<Database>, limit: number, before?: number) {
  let q = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(limit);
  if (before) q = q.where('id', '<', before);
  return q.execute();
}
