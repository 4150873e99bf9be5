import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { mintApiKey, revokeAllApiKeys } from './api-keys.js';
import { deleteSessionsOf } from './sessions.js';
import { createUser, findUserByUsername, lockUser } from './users.js';

/**
 * Creates (or promotes) a verified, approved owner person account and mints one key for it.
 * Idempotent for the account; every call mints a new key.
 *
 * Accounts are free to make, so a username may already be someone else's when the operator chooses it: only
 * an account of the address the operator gives is promoted, and one whose address was never shown to be its
 * holder's (`pending`: a sign-up with a password) loses that password, its sessions and its keys first, as a
 * verification by code takes them (whoever made it need not own the address; the operator vouches for it).
 */
export async function bootstrapOwner(db: Kysely<Database>, input: { username: string; email: string }, now: Date): Promise<{ apiKey: string; created: boolean }> {
  const existing = await findUserByUsername(db, input.username);
  if (existing && existing.email.toLowerCase() !== input.email.toLowerCase()) {
    throw new NdsError('username_taken', { message: `${input.username} is the username of an account of another address: choose another username, or give that account's address.` });
  }
  const user = await db.transaction().execute(async (trx) => {
    if (!existing) return createUser(trx, { username: input.username, email: input.email, status: 'approved', role: 'owner', kind: 'person' }, now);
    // Locked before its sessions are deleted: a sign-in that checked the pending row makes its session before
    // this (then deleted) or sees the dropped password (createSession), never after the delete.
    const pending = (await lockUser(trx, existing.id))?.status === 'pending';
    if (pending) {
      await deleteSessionsOf(trx, existing.id);
      await revokeAllApiKeys(trx, existing.id);
    }
    return trx
      .updateTable('users')
      .set({ role: 'owner', status: 'approved', tier: 'uploader', kind: 'person', revoked_at: null, updated_at: now, ...(pending && { password_hash: null }) })
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  await db.insertInto('audit_log').values({ actor_id: null, actor_username: 'bootstrap', action: 'owner.bootstrap', target: user.username, details: JSON.stringify({ created: !existing }), ip: null }).execute();
  const { apiKey } = await mintApiKey(db, user.id, 'bootstrap', 'bootstrap');
  return { apiKey, created: !existing };
}
