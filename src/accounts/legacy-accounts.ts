/**
 * What the deprecated account routes do, for old clients: password sign-up, resending the verification,
 * "retrieving" a key by email and password, and regenerating it through a mailed link.
 * Keys are never stored in clear, so a key cannot be retrieved: each of these mints a new key, and the key
 * earlier minted this way is revoked, so an account holds at most one such (`legacy`) key.
 */
import { sql, type Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { isNdsError, NdsError } from '../core/errors.js';
import { assertAccountUsable } from './account-gates.js';
import { mintApiKey, type MintedKey } from './api-keys.js';
import type { SignInMailDeps } from './email-sign-in.js';
import { consumeLinkToken, issueLinkToken, issueSignInCode, peekLinkToken } from './login-codes.js';
import { checkPassword } from './password-login.js';
import { hashPassword } from '../core/secrets.js';
import { keyRegenerationMail, signUpWithAddressInUseMail, verificationMail } from './sign-in-mail.js';
import { createUser, findUserByEmail, presentUser, type PresentedUser } from './users.js';

export const KEY_REGENERATION_LIFETIME_S = 3600;

/**
 * Registers a pending person account with a password and mails (posts) its verification code; what the sign-up
 * answers. Only this code keeps the password when it verifies the account.
 * An address an account uses already answers the same (docs/security.md: the answer tells nothing of the
 * address): nothing is made, the address is mailed a notice instead of a code, and the answer is the account the
 * sign-up would have made, unsaved. A taken username is `username_taken` either way: usernames are public.
 */
export async function registerWithPassword(
  deps: SignInMailDeps,
  account: { username: string; email: string; password: string },
  now: Date,
): Promise<PresentedUser> {
  const passwordHash = await hashPassword(account.password);
  let user: User;
  try {
    user = await createUser(deps.db, { username: account.username, email: account.email, status: 'pending', kind: 'person', passwordHash }, now);
  } catch (err) {
    if (!isNdsError(err, 'email_taken')) throw err;
    return answerForAddressInUse(deps, account);
  }
  // The one code whose verification keeps the password: the sign-up's own (decision 0061).
  const code = await issueSignInCode(deps.db, user.id, now, { keepsPassword: true });
  deps.mailer.post(verificationMail(deps.publicUrl, user.email, code, user.username, { keepsPassword: true }));
  return presentUser(user);
}

/**
 * A sign-up's answer for an address an account uses: the same work as a new account's (a look-up, a mail), and
 * the pending account it would have made. That account holds only what the caller sent (the username is free:
 * a taken one was refused before) and what every new account has; its `created_at` is the database's clock,
 * which stamps a row that is saved.
 */
async function answerForAddressInUse(deps: SignInMailDeps, account: { username: string; email: string }): Promise<PresentedUser> {
  const holder = await findUserByEmail(deps.db, account.email);
  deps.mailer.post(signUpWithAddressInUseMail(deps.publicUrl, holder?.email ?? account.email));
  const { rows } = await sql<{ now: Date }>`select now() as now`.execute(deps.db);
  const createdAt = rows[0]!.now;
  return presentUser({
    id: 0,
    username: account.username,
    email: account.email,
    status: 'pending',
    tier: 'basic',
    role: 'member',
    kind: 'person',
    identity_conflict: false,
    password_hash: null,
    orcid: null,
    oidc_subject: null,
    live_key_count: 0,
    upload_access_requested_at: null,
    approved_at: null,
    revoked_at: null,
    sandbox_completed_at: null,
    storage_quota_bytes: null,
    created_at: createdAt,
    updated_at: createdAt,
  });
}

/**
 * Mails (posts) a new verification code if `email` is a pending person account; otherwise does nothing, silently.
 * Anyone may ask, so the code verifies the address without the password given at the sign-up (decision 0061).
 */
export async function resendVerification(deps: SignInMailDeps, email: string, now: Date): Promise<void> {
  const user = await findUserByEmail(deps.db, email);
  if (!user || user.status !== 'pending' || user.kind !== 'person') return;
  const code = await issueSignInCode(deps.db, user.id, now);
  deps.mailer.post(verificationMail(deps.publicUrl, user.email, code, user.username, { keepsPassword: false }));
}

function assertMayHoldLegacyKey(user: User): void {
  assertAccountUsable(user);
  if (user.kind !== 'person') throw new NdsError('service_account');
}

/** Revokes the live `legacy` keys of a user, then mints one; in one transaction, under the 25-key cap. */
async function replaceLegacyKey(trx: Kysely<Database>, user: User, name: string): Promise<MintedKey> {
  await sql`
    with revoked as (
      update api_keys set revoked_at = now() where user_id = ${user.id} and origin = 'legacy' and revoked_at is null returning id
    )
    update users set live_key_count = live_key_count - (select count(*) from revoked) where id = ${user.id}`.execute(trx);
  return mintApiKey(trx, user.id, name, 'legacy');
}

/** Mints a key for the account whose email and password these are (`invalid_credentials` otherwise). */
export async function retrieveKeyByPassword(db: Kysely<Database>, email: string, password: string): Promise<{ user: User; minted: MintedKey }> {
  const user = await checkPassword(db, email, password);
  assertMayHoldLegacyKey(user);
  const minted = await db.transaction().execute((trx) => replaceLegacyKey(trx, user, 'retrieved by email and password'));
  return { user, minted };
}

/** Mails (posts) a key-regeneration link if `email` is a usable person account; otherwise does nothing, silently. */
export async function requestKeyRegeneration(deps: SignInMailDeps, email: string, now: Date): Promise<void> {
  const user = await findUserByEmail(deps.db, email);
  if (!user || user.kind !== 'person' || user.status === 'pending' || user.status === 'revoked' || user.identity_conflict) return;
  const token = await issueLinkToken(deps.db, user.id, 'key-regeneration', KEY_REGENERATION_LIFETIME_S, now);
  deps.mailer.post(keyRegenerationMail(deps.publicUrl, user.email, token, KEY_REGENERATION_LIFETIME_S));
}

/** True when `token` is a live key-regeneration link (for the page that asks to confirm it). */
export async function isKeyRegenerationLinkLive(db: Kysely<Database>, token: string, now: Date): Promise<boolean> {
  return (await peekLinkToken(db, 'key-regeneration', token, now)) !== undefined;
}

/**
 * Uses a mailed key-regeneration link: exactly once, it mints a new key and revokes the account's earlier
 * legacy key. Throws `link_invalid` for a used, expired or unknown link; the account gates as usual.
 */
export async function confirmKeyRegeneration(db: Kysely<Database>, token: string, now: Date): Promise<{ user: User; minted: MintedKey }> {
  return db.transaction().execute(async (trx) => {
    const userId = await consumeLinkToken(trx, 'key-regeneration', token, now);
    const user = await trx.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
    assertMayHoldLegacyKey(user);
    return { user, minted: await replaceLegacyKey(trx, user, 'regenerated by mailed link') };
  });
}
