/**
 * The sign-in a credential was minted under. Download credentials (`ndso_`), signed read URLs and read grants
 * name it beside their account: `k<id>` for an API key, `s<hash>` for a browser session (the SHA-256 of its
 * cookie, as the database holds it: the cookie cannot be had from it). Each is honoured only while that
 * sign-in lives, so deleting a key or signing out ends what was minted with it, as revoking the account ends
 * everything the account minted.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';

export type SignIn = string;

const SIGN_IN = /^(?:k[1-9]\d{0,15}|s[0-9a-f]{64})$/;

export function isSignIn(text: unknown): text is SignIn {
  return typeof text === 'string' && SIGN_IN.test(text);
}

/** The sign-in of a request's caller (its API key, else its browser session); undefined for none. */
export function signInOf(caller: { key?: { id: number }; sessionHash?: string } | undefined): SignIn | undefined {
  if (caller?.key) return `k${caller.key.id}`;
  if (caller?.sessionHash) return `s${caller.sessionHash}`;
  return undefined;
}

/**
 * Whether the sign-in of account `userId` still lives at `now`: the key not revoked, the session neither ended
 * (signed out, or all of the account's ended by an admin) nor past its expiry.
 */
export async function isSignInLive(db: Kysely<Database>, userId: number, signIn: SignIn, now: Date): Promise<boolean> {
  if (!isSignIn(signIn)) return false;
  const rest = signIn.slice(1);
  const row = signIn.startsWith('k')
    ? await db.selectFrom('api_keys').select('id').where('id', '=', Number(rest)).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst()
    : await db.selectFrom('sessions').select('user_id').where('id_hash', '=', rest).where('user_id', '=', userId).where('expires_at', '>', now).executeTakeFirst();
  return row !== undefined;
}
