/**
 * One-time secrets sent by mail (table `login_codes`): 6-digit sign-in codes and long link tokens.
 * Only a SHA-256 of each is stored. A sign-in code lives 10 minutes and allows 5 tries, counted atomically
 * in the database so that concurrent guesses cannot exceed them; a secret is consumed exactly once.
 */
import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { constantTimeEqual, newOpaqueToken, sha256Hex } from '../core/secrets.js';

export const LOGIN_CODE_LIFETIME_S = 600;
export const LOGIN_CODE_TRIES = 5;

/** What a mailed secret is for; one purpose's secret never works for another. */
export type LoginCodePurpose = 'sign-in' | 'key-regeneration';

/** Six decimal digits, uniformly drawn, leading zeros kept. */
export function newSignInCode(): string {
  return String(randomInt(1_000_000)).padStart(6, '0');
}

/** Typed input as the 6 digits it should be: spaces and dashes dropped. */
export function normalizeSignInCode(input: string): string {
  return input.replace(/[\s-]/g, '');
}

// A 6-digit code is hashed with its user and purpose, so that equal codes of two users never share a hash.
function signInCodeHash(userId: number, code: string): string {
  return sha256Hex(`sign-in:${userId}:${code}`);
}

function tokenHash(purpose: LoginCodePurpose, token: string): string {
  return sha256Hex(`${purpose}:${token}`);
}

/** What a sign-in code carries for the pending account it verifies (decision 0061). */
export interface SignInCodeChoices {
  /** The username asked for with the code: the pending account takes it when verified. Left out: it keeps its own. */
  username?: string;
  /** Set only by the sign-up that set the account's password, for its own code: verifying keeps that password. */
  keepsPassword?: boolean;
}

/**
 * Issues a new sign-in code for a user and returns it (to be mailed, never stored).
 * Earlier unused sign-in codes of the user stop working: only the newest code counts.
 */
export async function issueSignInCode(db: Kysely<Database>, userId: number, now: Date, choices: SignInCodeChoices = {}): Promise<string> {
  const code = newSignInCode();
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('login_codes').set({ used_at: now }).where('user_id', '=', userId).where('purpose', '=', 'sign-in').where('used_at', 'is', null).execute();
    await trx
      .insertInto('login_codes')
      .values({
        user_id: userId,
        code_hash: signInCodeHash(userId, code),
        purpose: 'sign-in',
        created_at: now,
        expires_at: new Date(now.getTime() + LOGIN_CODE_LIFETIME_S * 1000),
        used_at: null,
        username: choices.username ?? null,
        keeps_password: choices.keepsPassword ?? false,
      })
      .execute();
  });
  return code;
}

/**
 * Consumes the user's newest sign-in code if `typed` matches it, and returns what the code carries. Throws
 * `login_code_invalid` alike for a wrong code, none sent, one past its 10 minutes and one whose 5 tries are used
 * up: an address without an account answers the same (`completeSignInCode`), so a different answer would tell
 * which addresses have one.
 */
export async function consumeSignInCode(db: Kysely<Database>, userId: number, typed: string, now: Date): Promise<SignInCodeChoices> {
  const latest = await db
    .selectFrom('login_codes')
    .selectAll()
    .where('user_id', '=', userId)
    .where('purpose', '=', 'sign-in')
    .where('used_at', 'is', null)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!latest) throw new NdsError('login_code_invalid');
  if (new Date(latest.expires_at).getTime() <= now.getTime()) throw new NdsError('login_code_invalid');

  // The try is counted before the comparison, in one statement: of concurrent guesses, at most 5 are compared.
  const counted = await db
    .updateTable('login_codes')
    .set((eb) => ({ tries: eb('tries', '+', 1) }))
    .where('id', '=', latest.id)
    .where('tries', '<', LOGIN_CODE_TRIES)
    .where('used_at', 'is', null)
    .returning('tries')
    .executeTakeFirst();
  if (!counted) throw new NdsError('login_code_invalid');

  const code = normalizeSignInCode(typed);
  if (!/^\d{6}$/.test(code) || !constantTimeEqual(signInCodeHash(userId, code), latest.code_hash)) throw new NdsError('login_code_invalid');
  const used = await db.updateTable('login_codes').set({ used_at: now }).where('id', '=', latest.id).where('used_at', 'is', null).executeTakeFirst();
  // A concurrent request with the same right code got there first.
  if (Number(used.numUpdatedRows) !== 1) throw new NdsError('login_code_invalid');
  return { ...(latest.username !== null && { username: latest.username }), keepsPassword: latest.keeps_password };
}

/** Issues a long single-use token for a mailed link (e.g. key regeneration); returns it. */
export async function issueLinkToken(db: Kysely<Database>, userId: number, purpose: LoginCodePurpose, lifetimeS: number, now: Date): Promise<string> {
  const token = newOpaqueToken(32);
  await db
    .insertInto('login_codes')
    .values({
      user_id: userId,
      code_hash: tokenHash(purpose, token),
      purpose,
      created_at: now,
      expires_at: new Date(now.getTime() + lifetimeS * 1000),
      used_at: null,
    })
    .execute();
  return token;
}

/** The user a live link token belongs to, without consuming it; `undefined` for an unknown, used or expired one. */
export async function peekLinkToken(db: Kysely<Database>, purpose: LoginCodePurpose, token: string, now: Date): Promise<number | undefined> {
  if (token.length < 20 || token.length > 100) return undefined;
  const row = await db
    .selectFrom('login_codes')
    .select(['user_id', 'expires_at'])
    .where('code_hash', '=', tokenHash(purpose, token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (!row || new Date(row.expires_at).getTime() <= now.getTime()) return undefined;
  return row.user_id;
}

/**
 * Consumes a link token, exactly once, inside the caller's transaction; returns its user id.
 * Throws `link_invalid` for an unknown, used or expired token.
 */
export async function consumeLinkToken(db: Kysely<Database>, purpose: LoginCodePurpose, token: string, now: Date): Promise<number> {
  if (token.length < 20 || token.length > 100) throw new NdsError('link_invalid');
  const row = await db
    .updateTable('login_codes')
    .set({ used_at: now })
    .where('code_hash', '=', tokenHash(purpose, token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('user_id')
    .executeTakeFirst();
  if (!row) throw new NdsError('link_invalid');
  return row.user_id;
}
