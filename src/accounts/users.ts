import type { Kysely } from 'kysely';
import type { User, UserKind, UserRole, UserStatus } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { isUniqueViolation } from '../db/sql-errors.js';

export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9-]{2,38}$/;

export function checkUsername(username: string): string {
  if (!USERNAME_PATTERN.test(username)) {
    throw new NdsError('validation_failed', { details: ['username: 3-39 characters, lower-case letters, digits and hyphens, not starting with a hyphen'] });
  }
  return username;
}

export function findUserByUsername(db: Kysely<Database>, username: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('username', '=', username.toLowerCase()).executeTakeFirst();
}

export function findUserById(db: Kysely<Database>, id: number): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The user, its row locked until the end of the transaction `trx`: work done per account goes one at a time. */
export function lockUser(trx: Kysely<Database>, id: number): Promise<User | undefined> {
  return trx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export function findUserByEmail(db: Kysely<Database>, email: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase())).executeTakeFirst();
}

export async function getUserByUsername(db: Kysely<Database>, username: string): Promise<User> {
  const user = await findUserByUsername(db, username);
  if (!user) throw new NdsError('user_not_found', { message: `No user named ${username}.` });
  return user;
}

export interface NewAccount {
  username: string;
  email: string;
  status: UserStatus;
  role?: UserRole;
  kind?: UserKind;
  passwordHash?: string;
}

/** Creates an account (an approved one is approved at `now`); a taken username or email answers 409. */
export async function createUser(db: Kysely<Database>, account: NewAccount, now: Date): Promise<User> {
  checkUsername(account.username);
  if (await findUserByUsername(db, account.username)) throw new NdsError('username_taken');
  if (await findUserByEmail(db, account.email)) throw new NdsError('email_taken');
  try {
    return await db
      .insertInto('users')
      .values({
        username: account.username,
        email: account.email,
        status: account.status,
        tier: account.status === 'approved' ? 'uploader' : 'basic',
        role: account.role ?? 'member',
        kind: account.kind ?? 'person',
        password_hash: account.passwordHash ?? null,
        orcid: null,
        oidc_subject: null,
        upload_access_requested_at: null,
        approved_at: account.status === 'approved' ? now : null,
        revoked_at: null,
        sandbox_completed_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (err) {
    // Two sign-ups racing for one name: the unique index decides.
    if (isUniqueViolation(err)) {
      throw new NdsError(String((err as { constraint?: string }).constraint).includes('email') ? 'email_taken' : 'username_taken', { cause: err });
    }
    throw err;
  }
}

/** Records that the user asks for upload access (the first time only); the user as it now is. */
export async function recordUploadAccessRequest(db: Kysely<Database>, user: User, now: Date): Promise<User> {
  const updated = await db
    .updateTable('users')
    .set({ upload_access_requested_at: now })
    .where('id', '=', user.id)
    .where('upload_access_requested_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  return updated ?? user;
}

/** Closes an open upload-access request (a denial); `undefined` when none was open (decided meanwhile). */
export function closeUploadAccessRequest(db: Kysely<Database>, user: User, now: Date): Promise<User | undefined> {
  return db
    .updateTable('users')
    .set({ upload_access_requested_at: null, updated_at: now })
    .where('id', '=', user.id)
    .where('upload_access_requested_at', 'is not', null)
    .returningAll()
    .executeTakeFirst();
}

/** The addresses of the people who decide requests: administrators and the owner, persons, not revoked. */
export async function administratorAddresses(db: Kysely<Database>): Promise<string[]> {
  const rows = await db.selectFrom('users').select('email').where('role', 'in', ['admin', 'owner']).where('kind', '=', 'person').where('status', '!=', 'revoked').orderBy('id').execute();
  return rows.map((r) => r.email);
}

/** `a***@example.org`: enough for a person to recognise their address, not enough to harvest it. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${email[0]}***${email.slice(at)}`;
}

export interface PresentedUser {
  username: string;
  email: string;
  email_verified: boolean;
  status: UserStatus;
  tier: User['tier'];
  role: UserRole;
  kind: UserKind;
  identity_conflict: boolean;
  upload_access_requested: boolean;
  sandbox_completed: boolean;
  created_at: string;
}

export function presentUser(user: User): PresentedUser {
  return {
    username: user.username,
    email: user.email,
    email_verified: user.status !== 'pending',
    status: user.status,
    tier: user.tier,
    role: user.role,
    kind: user.kind,
    identity_conflict: user.identity_conflict,
    upload_access_requested: user.upload_access_requested_at !== null,
    sandbox_completed: user.sandbox_completed_at !== null,
    created_at: new Date(user.created_at).toISOString(),
  };
}
