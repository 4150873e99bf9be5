/**
 * Browser sessions: an opaque cookie value, stored as its SHA-256, valid 30 days. An account holds at most
 * `MAX_SESSIONS_A_USER` live ones, and expired rows are deleted, so signing in in a loop (a right password is
 * never rate-limited) cannot grow the table without bound.
 */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { runPeriodically, type Periodic } from '../core/periodic.js';
import { newOpaqueToken, sha256Hex } from '../core/secrets.js';
import { lockUser } from './users.js';

export const SESSION_COOKIE = 'nds_session';
export const SESSION_DAYS = 30;
/** Live sessions one account keeps: a new sign-in past this many ends the oldest. */
export const MAX_SESSIONS_A_USER = 50;

export interface NewSession {
  /** The cookie value; the database holds only its hash. */
  token: string;
  expiresAt: Date;
}

/**
 * What a sign-in checked of its account, to hold still when its session is made: the check and the session are
 * apart (a password's slow hash lies between them), and what ends an account's sessions (a revocation, a change
 * of kind, the drop of a pending sign-up's password) must not be undone by a session made after it.
 */
export interface CheckedSignIn {
  /** The password hash a password sign-in was checked against: dropped or changed since, the sign-in fails. */
  passwordHash?: string | null;
}

/**
 * A new session of `userId`. With `checked`, made only if the account, read under its row lock, is still a
 * person account, not revoked, and as `checked` says; else `invalid_credentials`, `account_revoked` or
 * `service_account`, as a sign-in begun now would answer.
 */
export async function createSession(
  db: Kysely<Database>,
  userId: number,
  now: Date,
  meta: { ip?: string; userAgent?: string } = {},
  checked?: CheckedSignIn,
): Promise<NewSession> {
  const token = newOpaqueToken();
  const expiresAt = new Date(now.getTime() + SESSION_DAYS * 86_400_000);
  const idHash = sha256Hex(token);
  await db.transaction().execute(async (trx) => {
    // The account's row is locked while its sessions are counted: concurrent sign-ins cannot keep more together.
    // Whatever ends its sessions changes that row first, so it waits for this session, or this one sees it.
    const user = await lockUser(trx, userId);
    if (checked) refuseChangedSignIn(user, checked);
    await trx
      .insertInto('sessions')
      .values({ id_hash: idHash, user_id: userId, expires_at: expiresAt, ip: meta.ip ?? null, user_agent: meta.userAgent?.slice(0, 300) ?? null })
      .execute();
    // The account's expired sessions, and its live ones past the newest MAX_SESSIONS_A_USER (this one among them).
    const kept = trx
      .selectFrom('sessions')
      .select('id_hash')
      .where('user_id', '=', userId)
      .where('expires_at', '>', now)
      .orderBy((eb) => eb.case().when('id_hash', '=', idHash).then(0).else(1).end())
      .orderBy('created_at', 'desc')
      .orderBy('id_hash')
      .limit(MAX_SESSIONS_A_USER);
    await trx
      .deleteFrom('sessions')
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('expires_at', '<=', now), eb('id_hash', 'not in', kept)]))
      .execute();
  });
  return { token, expiresAt };
}

function refuseChangedSignIn(user: User | undefined, checked: CheckedSignIn): void {
  if (!user || (checked.passwordHash !== undefined && user.password_hash !== checked.passwordHash)) throw new NdsError('invalid_credentials');
  if (user.status === 'revoked') throw new NdsError('account_revoked');
  if (user.kind !== 'person') throw new NdsError('service_account');
}

/** Deletes every expired session (of any account); how many. */
export async function deleteExpiredSessions(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes expired sessions now and every `intervalMs` (`nds serve`); `stop` waits for a sweep under way. */
export function startSessionSweeper(deps: Pick<Deps, 'db' | 'clock' | 'log'>, intervalMs: number): Periodic {
  return runPeriodically(
    () =>
      deleteExpiredSessions(deps.db, deps.clock.now()).then(
        (n) => n > 0 && deps.log.info({ deleted: n }, 'deleted expired browser sessions'),
        (err: unknown) => deps.log.warn({ err }, 'the sweep of expired browser sessions failed'),
      ),
    intervalMs,
  );
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
