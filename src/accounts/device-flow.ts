/**
 * Device sign-in (RFC 8628): a client starts a code pair, a person confirms or denies the user code in a
 * signed-in browser, and the client collects an API key by polling. The key is minted at collection, in one
 * transaction that re-checks every account gate; exactly one collection of a code can succeed.
 */
import type { Kysely } from 'kysely';
import type { DeviceCode, User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError, TokenPollRefusal, type ErrorCode } from '../core/errors.js';
import { assertAccountUsable } from './account-gates.js';
import { mintApiKey, presentApiKey, type PresentedKey } from './api-keys.js';
import { newOpaqueToken, randomString, sha256Hex } from '../core/secrets.js';
import { maskEmail } from './users.js';
import { isUniqueViolation } from '../db/sql-errors.js';

/** RFC 8628 section 6.1: no vowels (no words), no look-alikes (0/O, 1/I). */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ23456789';
export const DEVICE_CODE_LIFETIME_S = 600;

/** Upper-cases typed input and keeps only letters and digits: `bcdf-ghjk` → `BCDFGHJK`. */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** `BCDFGHJK` → `BCDF-GHJK`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export interface DeviceStart {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export async function startDeviceSignIn(
  db: Kysely<Database>,
  options: { now: Date; publicUrl: string; intervalS: number; machineName?: string; ip?: string },
): Promise<DeviceStart> {
  for (let attempt = 0; ; attempt++) {
    const deviceCode = newOpaqueToken(32);
    const userCode = randomString(USER_CODE_ALPHABET, 8);
    try {
      await db
        .insertInto('device_codes')
        .values({
          device_code_hash: sha256Hex(deviceCode),
          user_code_hash: sha256Hex(userCode),
          machine_name: options.machineName?.slice(0, 100) ?? null,
          state: 'pending',
          user_id: null,
          requested_ip: options.ip ?? null,
          created_at: options.now,
          expires_at: new Date(options.now.getTime() + DEVICE_CODE_LIFETIME_S * 1000),
          interval_s: options.intervalS,
          last_poll_at: null,
          decided_at: null,
          key_id: null,
        })
        .execute();
      const shown = formatUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: `${options.publicUrl}/device`,
        verification_uri_complete: `${options.publicUrl}/device?code=${shown}`,
        expires_in: DEVICE_CODE_LIFETIME_S,
        interval: options.intervalS,
      };
    } catch (err) {
      // 28^8 codes: a collision with a live one is rare, but possible; draw again.
      if (isUniqueViolation(err) && attempt < 5) continue;
      throw err;
    }
  }
}

function isExpired(code: DeviceCode, now: Date): boolean {
  return now.getTime() >= new Date(code.expires_at).getTime();
}

export interface TokenGrant {
  api_key: string;
  key: PresentedKey;
  user: { username: string; role: User['role']; kind: User['kind']; status: User['status'] };
}

/**
 * One poll of `POST /auth/device/token`. Returns the grant, or throws a `TokenPollRefusal`
 * (`authorization_pending`, `slow_down`, or a terminal error with its reason).
 */
export async function pollDeviceToken(db: Kysely<Database>, deviceCode: string, now: Date): Promise<TokenGrant> {
  const code = await db.selectFrom('device_codes').selectAll().where('device_code_hash', '=', sha256Hex(deviceCode)).executeTakeFirst();
  if (!code) throw new TokenPollRefusal('invalid_grant', 'device_code_unknown');
  if (code.state === 'used') throw new TokenPollRefusal('invalid_grant', 'device_code_used');
  if (isExpired(code, now)) throw new TokenPollRefusal('expired_token', 'device_code_expired');
  if (code.state === 'denied') throw new TokenPollRefusal('access_denied', 'device_code_denied');
  if (code.state === 'authorized') return collect(db, code.id, now);

  // Pending: count this poll only if it came at least `interval` seconds after the last counted one.
  const earliest = new Date(now.getTime() - code.interval_s * 1000);
  const counted = await db
    .updateTable('device_codes')
    .set({ last_poll_at: now })
    .where('id', '=', code.id)
    .where((eb) => eb.or([eb('last_poll_at', 'is', null), eb('last_poll_at', '<=', earliest)]))
    .executeTakeFirst();
  if (Number(counted.numUpdatedRows) === 0) throw new TokenPollRefusal('slow_down');
  throw new TokenPollRefusal('authorization_pending');
}

async function collect(db: Kysely<Database>, codeId: number, now: Date): Promise<TokenGrant> {
  return db.transaction().execute(async (trx) => {
    // The state move is the lock: of any number of concurrent collections, one sees `authorized`.
    const claimed = await trx
      .updateTable('device_codes')
      .set({ state: 'used', decided_at: now })
      .where('id', '=', codeId)
      .where('state', '=', 'authorized')
      .returningAll()
      .executeTakeFirst();
    if (!claimed || claimed.user_id === null) throw new TokenPollRefusal('invalid_grant', 'device_code_used');
    const user = await trx.selectFrom('users').selectAll().where('id', '=', claimed.user_id).executeTakeFirstOrThrow();
    const refusal = collectionRefusal(user);
    if (refusal) throw new TokenPollRefusal('access_denied', refusal);
    let minted;
    try {
      minted = await mintApiKey(trx, user.id, `device: ${claimed.machine_name ?? 'unnamed machine'}`, 'device');
    } catch (err) {
      // The mint re-checks the account on its row: a revocation or change of kind since the check above wins.
      if (err instanceof NdsError && (err.code === 'too_many_keys' || err.code === 'account_revoked' || err.code === 'service_account')) throw new TokenPollRefusal('access_denied', err.code);
      throw err;
    }
    await trx.updateTable('device_codes').set({ key_id: minted.row.id }).where('id', '=', codeId).execute();
    return {
      api_key: minted.apiKey,
      key: presentApiKey(minted.row, minted.row.id),
      user: { username: user.username, role: user.role, kind: user.kind, status: user.status },
    };
  });
}

/** The gate that refuses an account a device sign-in, or `undefined` when it may sign in. */
export function collectionRefusal(user: User): ErrorCode | undefined {
  try {
    assertAccountUsable(user);
  } catch (err) {
    if (err instanceof NdsError) return err.code;
    throw err;
  }
  if (user.kind !== 'person') return 'service_account';
  return undefined;
}

async function findByUserCode(db: Kysely<Database>, typed: string): Promise<DeviceCode | undefined> {
  const normalized = normalizeUserCode(typed);
  if (normalized.length !== 8) return undefined;
  return db.selectFrom('device_codes').selectAll().where('user_code_hash', '=', sha256Hex(normalized)).executeTakeFirst();
}

/** A code that names nothing, or is no longer usable, as the refusal of docs/api.md (404 / 410 / 409). */
function assertCodeOpen(code: DeviceCode | undefined, now: Date): asserts code is DeviceCode {
  if (!code) throw new NdsError('device_code_unknown');
  if (code.state === 'used') throw new NdsError('device_code_used');
  if (isExpired(code, now)) throw new NdsError('device_code_expired');
  if (code.state === 'denied') throw new NdsError('device_code_denied');
}

export interface DeviceLookup {
  user_code: string;
  state: 'pending' | 'authorized';
  machine_name: string | null;
  requested_at: string;
  expires_in: number;
  account: { username: string; email_masked: string };
  refusal: { code: ErrorCode; message: string } | null;
}

/** What a code names, for the browser page that asks the person to approve it. */
export async function lookupDeviceCode(db: Kysely<Database>, typed: string, user: User, now: Date): Promise<DeviceLookup> {
  const code = await findByUserCode(db, typed);
  assertCodeOpen(code, now);
  const refusal = collectionRefusal(user);
  return {
    user_code: formatUserCode(normalizeUserCode(typed)),
    state: code.state as 'pending' | 'authorized',
    machine_name: code.machine_name,
    requested_at: new Date(code.created_at).toISOString(),
    expires_in: Math.max(0, Math.floor((new Date(code.expires_at).getTime() - now.getTime()) / 1000)),
    account: { username: user.username, email_masked: maskEmail(user.email) },
    refusal: refusal ? { code: refusal, message: new NdsError(refusal).message } : null,
  };
}

/** Confirms a code for the signed-in user; mints nothing. Confirming one's own confirmed code again is a no-op. */
export async function confirmDeviceCode(db: Kysely<Database>, typed: string, user: User, now: Date): Promise<void> {
  const code = await findByUserCode(db, typed);
  assertCodeOpen(code, now);
  const refusal = collectionRefusal(user);
  if (refusal) throw new NdsError(refusal);
  const moved = await db
    .updateTable('device_codes')
    .set({ state: 'authorized', user_id: user.id, decided_at: now })
    .where('id', '=', code.id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) === 1) return;
  const current = await db.selectFrom('device_codes').selectAll().where('id', '=', code.id).executeTakeFirstOrThrow();
  if (current.state === 'authorized' && current.user_id === user.id) return;
  assertCodeOpen(current, now);
  throw new NdsError('device_code_used');
}

/** Declines a pending code (or one this user confirmed but the client has not collected yet). */
export async function denyDeviceCode(db: Kysely<Database>, typed: string, user: User, now: Date): Promise<void> {
  const code = await findByUserCode(db, typed);
  assertCodeOpen(code, now);
  const moved = await db
    .updateTable('device_codes')
    .set({ state: 'denied', user_id: user.id, decided_at: now })
    .where('id', '=', code.id)
    .where((eb) => eb.or([eb('state', '=', 'pending'), eb.and([eb('state', '=', 'authorized'), eb('user_id', '=', user.id)])]))
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) === 1) return;
  const current = await db.selectFrom('device_codes').selectAll().where('id', '=', code.id).executeTakeFirstOrThrow();
  assertCodeOpen(current, now);
  throw new NdsError('device_code_used');
}
