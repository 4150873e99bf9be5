/**
 * Sign-in by a code sent by mail (docs/api.md): asking for a code (creating a pending person account for a
 * new address when a username comes with it), and turning a right code into a verified account.
 * Asking without a username answers the same whether or not the address has an account.
 */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError, isNdsError } from '../core/errors.js';
import type { Mailer } from '../mail/mailer.js';
import { revokeAllApiKeys } from './api-keys.js';
import { consumeSignInCode, issueSignInCode } from './login-codes.js';
import { deleteSessionsOf } from './sessions.js';
import { noAccountMail, signInCodeMail } from './sign-in-mail.js';
import { createUser, findUserByEmail, findUserByUsername } from './users.js';

export interface SignInMailDeps {
  db: Kysely<Database>;
  mailer: Mailer;
  publicUrl: string;
}

/**
 * Mails a sign-in code to `email`. With `username` and an address no account uses, first creates a `pending`
 * person account; a `username` held by an account of another address is `username_taken`, for a known address
 * as for an unknown one. Sends nothing to revoked, service or test
 * accounts; an unknown address without `username` gets a mail saying no account uses it. A pending account's
 * password (given at a sign-up with this address, by anyone) is dropped.
 */
export async function requestSignInCode(deps: SignInMailDeps, request: { email: string; username?: string }, now: Date): Promise<void> {
  if (request.username) {
    // A name held by an account of another address is refused whether or not this address has an account: the
    // answer then tells nothing of the address (a known one would otherwise sign in and answer 200).
    const holder = await findUserByUsername(deps.db, request.username);
    if (holder && holder.email.toLowerCase() !== request.email.toLowerCase()) throw new NdsError('username_taken');
  }
  let user = await findUserByEmail(deps.db, request.email);
  if (!user && request.username) {
    try {
      user = await createUser(deps.db, { username: request.username, email: request.email, status: 'pending', kind: 'person' }, now);
    } catch (err) {
      // Another request created the account for this address a moment ago: sign that account in instead.
      if (!isNdsError(err, 'email_taken')) throw err;
      user = await findUserByEmail(deps.db, request.email);
    }
  }
  if (!user) {
    await deps.mailer.send(noAccountMail(deps.publicUrl, request.email));
    return;
  }
  if (user.status === 'revoked' || user.kind !== 'person') return;
  if (user.status === 'pending' && user.password_hash) {
    // A password given with an address nobody has shown to be theirs may be anyone's: whoever signs up with
    // someone else's address keeps no password once that address's owner asks for a code, nor the sessions it
    // opened. (The code mailed by the sign-up itself, which the sign-up's own verification uses, keeps it.)
    await deps.db.transaction().execute(async (trx) => {
      const dropped = await trx.updateTable('users').set({ password_hash: null, updated_at: now }).where('id', '=', user.id).where('status', '=', 'pending').returning('id').executeTakeFirst();
      if (dropped) await deleteSessionsOf(trx, user.id);
    });
  }
  const code = await issueSignInCode(deps.db, user.id, now);
  await deps.mailer.send(signInCodeMail(deps.publicUrl, user.email, code, user.username));
}

/**
 * Checks a code against the newest one sent to `email` and, when right, marks the address verified
 * (`pending` → `verified`) and returns the account. An address with no account answers `login_code_invalid`,
 * like a wrong code. A pending account's sessions and keys end when it is verified: whoever opened them (by a
 * password given at a sign-up with this address) had not shown the address to be theirs, and the account is
 * now its owner's.
 */
export async function completeSignInCode(db: Kysely<Database>, request: { email: string; code: string }, now: Date): Promise<User> {
  const user = await findUserByEmail(db, request.email);
  if (!user) throw new NdsError('login_code_invalid');
  await consumeSignInCode(db, user.id, request.code, now);
  if (user.status === 'revoked') throw new NdsError('account_revoked');
  // As a password sign-in: a service or test account holds only the keys its owner mints.
  if (user.kind !== 'person') throw new NdsError('service_account');
  if (user.status !== 'pending') return user;
  const verified = await db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('users').set({ status: 'verified', updated_at: now }).where('id', '=', user.id).where('status', '=', 'pending').returningAll().executeTakeFirst();
    if (!row) return undefined;
    await deleteSessionsOf(trx, user.id);
    const revoked = await revokeAllApiKeys(trx, user.id);
    return revoked > 0 ? await trx.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow() : row;
  });
  return verified ?? (await db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow());
}
