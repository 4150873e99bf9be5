/**
 * Sign-in with a password, for accounts that registered one through the legacy `/auth/signup`.
 * A wrong name and a wrong password look the same, and take about the same time.
 */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { hashPassword, verifyPassword } from '../core/secrets.js';
import { findUserByEmail, findUserByUsername } from './users.js';

let dummyHash: Promise<string> | undefined;

/**
 * What wrong passwords are counted under: the account `login` names, however it is named (its username or
 * its address, in any case), so that naming it another way gives no second budget of guesses; a name of no
 * account is counted under itself.
 */
export async function passwordFailureKey(db: Kysely<Database>, login: string): Promise<string> {
  const trimmed = login.trim();
  const user = trimmed.includes('@') ? await findUserByEmail(db, trimmed) : await findUserByUsername(db, trimmed);
  return user ? `account:${user.id}` : `name:${trimmed.toLowerCase()}`;
}

/** The account named by `login` (a username or an email address) if `password` is its password. */
export async function checkPassword(db: Kysely<Database>, login: string, password: string): Promise<User> {
  const trimmed = login.trim();
  const user = trimmed.includes('@') ? await findUserByEmail(db, trimmed) : await findUserByUsername(db, trimmed);
  if (!user?.password_hash) {
    // Spend the scrypt time anyway, so that timing does not tell which names exist.
    await verifyPassword(password, await (dummyHash ??= hashPassword('not a real password')));
    throw new NdsError('invalid_credentials');
  }
  if (!(await verifyPassword(password, user.password_hash))) throw new NdsError('invalid_credentials');
  return user;
}

/**
 * Password sign-in for a browser session. A pending account may sign in (to finish verification);
 * a revoked one is refused with `account_revoked`, a service or test account with `service_account` (its keys
 * are the owner's to mint, and a session the owner cannot see would escape that), each only after the password.
 */
export async function passwordLogin(db: Kysely<Database>, login: string, password: string): Promise<User> {
  const user = await checkPassword(db, login, password);
  if (user.status === 'revoked') throw new NdsError('account_revoked');
  if (user.kind !== 'person') throw new NdsError('service_account');
  return user;
}
