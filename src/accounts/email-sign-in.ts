/**
 * Sign-in by a code sent by mail (docs/api.md): asking for a code (creating a pending person account for a
 * new address when a username comes with it), and turning a right code into a verified account.
 * Every answer is the same whether or not the address has an account, and whatever the account's state: the
 * mails that differ are posted, not awaited.
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
import { checkUsername, createUser, findUserByEmail, findUserByUsername } from './users.js';
import { isUniqueViolation } from '../db/sql-errors.js';

export interface SignInMailDeps {
  db: Kysely<Database>;
  mailer: Mailer;
  publicUrl: string;
}

/**
 * Mails a sign-in code to `email` (posted: delivered after the answer, so the answer takes the same time whatever
 * the address). A `username` that any account holds, this address's own included, is `username_taken`: the
 * answer depends on the name alone, which is public, never on whether a name and an address go together
 * (decision 0061). With a free `username`, an address no account uses gets a new `pending` person account; a
 * pending account's code carries the name, which the account takes when that code verifies it; an account past
 * pending keeps its name. Sends nothing to revoked, service or test accounts; an unknown address without
 * `username` gets a mail saying no account uses it. A pending account's password (given at a sign-up with this
 * address, by anyone) is dropped, with the sessions it opened.
 */
export async function requestSignInCode(deps: SignInMailDeps, request: { email: string; username?: string }, now: Date): Promise<void> {
  if (request.username && (await findUserByUsername(deps.db, checkUsername(request.username)))) throw new NdsError('username_taken');
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
    deps.mailer.post(noAccountMail(deps.publicUrl, request.email));
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
  // Whoever holds the address chooses the pending account's name: the one asked for with the code it types.
  const username = user.status === 'pending' ? request.username : undefined;
  const code = await issueSignInCode(deps.db, user.id, now, { username });
  deps.mailer.post(signInCodeMail(deps.publicUrl, user.email, code, username ?? user.username));
}

/**
 * Checks a code against the newest one sent to `email` and, when right, marks the address verified
 * (`pending` → `verified`) and returns the account. An address with no account answers `login_code_invalid`,
 * like a wrong code. A pending account verified takes the username its code was asked with (`username_taken`
 * if another account took it since: the code is used up, and a new one is asked for with another name), and
 * keeps its password only when the code is the one mailed by the sign-up that set it (decision 0061). Its
 * sessions and keys end: whoever opened them (by a password given at a sign-up with this address) had not
 * shown the address to be theirs, and the account is now its owner's.
 */
export async function completeSignInCode(db: Kysely<Database>, request: { email: string; code: string }, now: Date): Promise<User> {
  const user = await findUserByEmail(db, request.email);
  if (!user) throw new NdsError('login_code_invalid');
  const choices = await consumeSignInCode(db, user.id, request.code, now);
  if (user.status === 'revoked') throw new NdsError('account_revoked');
  // As a password sign-in: a service or test account holds only the keys its owner mints.
  if (user.kind !== 'person') throw new NdsError('service_account');
  if (user.status !== 'pending') return user;
  const username = choices.username !== undefined && choices.username !== user.username ? choices.username : undefined;
  const takenMeanwhile = (cause?: unknown) =>
    new NdsError('username_taken', { message: `The username ${username} was taken after your code was sent. Ask for a new code with another username.`, cause });
  const verified = await db.transaction().execute(async (trx) => {
    if (username !== undefined && (await findUserByUsername(trx, username))) throw takenMeanwhile();
    const row = await trx
      .updateTable('users')
      .set({ status: 'verified', updated_at: now, ...(username !== undefined && { username }), ...(!choices.keepsPassword && { password_hash: null }) })
      .where('id', '=', user.id)
      .where('status', '=', 'pending')
      .returningAll()
      .executeTakeFirst()
      .catch((err: unknown) => {
        // Another account took the name between the look-up and this write: the unique index decides.
        throw isUniqueViolation(err) ? takenMeanwhile(err) : err;
      });
    if (!row) return undefined;
    await deleteSessionsOf(trx, user.id);
    const revoked = await revokeAllApiKeys(trx, user.id);
    return revoked > 0 ? await trx.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow() : row;
  });
  return verified ?? (await db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow());
}
