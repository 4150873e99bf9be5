import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { mintApiKey } from './api-keys.js';
import { createUser, findUserByUsername } from './users.js';

/**
 * Creates (or promotes) a verified, approved owner person account and mints one key for it.
 * Idempotent for the account; every call mints a new key.
 */
export async function bootstrapOwner(db: Kysely<Database>, input: { username: string; email: string }, now: Date): Promise<{ apiKey: string; created: boolean }> {
  let user = await findUserByUsername(db, input.username);
  const created = !user;
  if (!user) {
    user = await createUser(db, { username: input.username, email: input.email, status: 'approved', role: 'owner', kind: 'person' }, now);
  } else {
    user = await db
      .updateTable('users')
      .set({ role: 'owner', status: 'approved', tier: 'uploader', kind: 'person', revoked_at: null, updated_at: now })
      .where('id', '=', user.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  await db.insertInto('audit_log').values({ actor_id: null, actor_username: 'bootstrap', action: 'owner.bootstrap', target: user.username, details: JSON.stringify({ created }), ip: null }).execute();
  const { apiKey } = await mintApiKey(db, user.id, 'bootstrap', 'bootstrap');
  return { apiKey, created };
}
