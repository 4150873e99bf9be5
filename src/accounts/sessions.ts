/** Browser sessions: an opaque cookie value, stored as its SHA-256, valid 30 days. */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { newOpaqueToken, sha256Hex } from '../core/secrets.js';

export const SESSION_COOKIE = 'nds_session';
export const SESSION_DAYS = 30;

export interface NewSession {
  /** The cookie value; the database holds only its hash. */
  token: string;
  expiresAt: Date;
}

export async function createSession(
  db: Kysely<Database>,
  userId: number,
  now: Date,
  meta: { ip?: string; userAgent?: string } = {},
): Promise<NewSession> {
  const token = newOpaqueToken();
  const expiresAt = new Date(now.getTime() + SESSION_DAYS * 86_400_000);
  await db
    .insertInto('sessions')
    .values({ id_hash: sha256Hex(token), user_id: userId, expires_at: expiresAt, ip: meta.ip ?? null, user_agent: meta.userAgent?.slice(0, 300) ?? null })
    .execute();
  return { token, expiresAt };
}

/** The user of a live session, or `undefined` for an unknown or expired one. */
export async function findSession(db: Kysely<Database>, token: string, now: Date): Promise<{ user: User; sessionHash: string } | undefined> {
  if (token.length < 20 || token.length > 100) return undefined;
  const hash = sha256Hex(token);
  const session = await db.selectFrom('sessions').selectAll().where('id_hash', '=', hash).executeTakeFirst();
  if (!session || new Date(session.expires_at) <= now) return undefined;
  const user = await db.selectFrom('users').selectAll().where('id', '=', session.user_id).executeTakeFirst();
  return user ? { user, sessionHash: hash } : undefined;
}

export async function deleteSession(db: Kysely<Database>, sessionHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', sessionHash).execute();
}

/** Ends every session of an account (revoked, or claimed by the owner of its address): each must sign in again. */
export async function deleteSessionsOf(db: Kysely<Database>, userId: number): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}
