/**
 * API keys: minting under the 25-live-key cap, listing, revoking and authenticating.
 * The cap is enforced by one statement that takes a slot on the user row and inserts the key together,
 * so concurrent mints can never overshoot it.
 */
import { sql, type Kysely } from 'kysely';
import type { ApiKey, User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import type { KeyAuthentication, KeyCache } from './key-cache.js';
import { keyPrefix, newApiKey, sha256Hex } from '../core/secrets.js';

export const MAX_LIVE_KEYS = 25;

export type KeyOrigin = 'device' | 'named' | 'admin' | 'bootstrap' | 'legacy';

export interface MintedKey {
  /** The key itself: shown once, never stored. */
  apiKey: string;
  row: ApiKey;
}

/**
 * Mints a key for a user; throws `too_many_keys` when the user already holds 25 live keys. A key the account
 * mints itself (any origin but `admin`) needs a person account that is not revoked, checked on the row the
 * slot takes: a revocation or change of kind committed while the caller was checked and the key minted wins
 * (`account_revoked`, `service_account`), as the keys it revokes cannot include one made after it.
 */
export async function mintApiKey(db: Kysely<Database>, userId: number, name: string, origin: KeyOrigin): Promise<MintedKey> {
  const apiKey = newApiKey();
  const { rows } = await sql<ApiKey>`
    with slot as (
      update users set live_key_count = live_key_count + 1
      where id = ${userId} and live_key_count < ${MAX_LIVE_KEYS}
        and (${origin} = 'admin' or (kind = 'person' and status <> 'revoked'))
      returning id
    )
    insert into api_keys (user_id, name, key_hash, prefix, origin)
    select id, ${name}, ${sha256Hex(apiKey)}, ${keyPrefix(apiKey)}, ${origin} from slot
    returning *`.execute(db);
  if (rows.length === 0) throw await noSlotError(db, userId, origin);
  return { apiKey, row: rows[0] };
}

async function noSlotError(db: Kysely<Database>, userId: number, origin: KeyOrigin): Promise<NdsError> {
  const user = await db.selectFrom('users').select(['status', 'kind']).where('id', '=', userId).executeTakeFirst();
  if (origin !== 'admin' && user?.status === 'revoked') return new NdsError('account_revoked');
  if (origin !== 'admin' && user && user.kind !== 'person') return new NdsError('service_account');
  return new NdsError('too_many_keys');
}

/** Revokes a live key of a user; throws `key_not_found` when there is no such live key. */
export async function revokeApiKey(db: Kysely<Database>, userId: number, keyId: number): Promise<void> {
  const { rows } = await sql<{ id: number }>`
    with revoked as (
      update api_keys set revoked_at = now()
      where id = ${keyId} and user_id = ${userId} and revoked_at is null
      returning user_id
    )
    update users set live_key_count = live_key_count - 1, updated_at = now()
    from revoked where users.id = revoked.user_id
    returning users.id`.execute(db);
  if (rows.length === 0) throw new NdsError('key_not_found');
}

/**
 * Revokes every live key of a user (account revocation), or, with `keep`, every one not of that origin (an
 * account made a service account keeps the keys its owner minted for it, and only those).
 */
export async function revokeAllApiKeys(db: Kysely<Database>, userId: number, keep?: KeyOrigin): Promise<number> {
  const kept = keep === undefined ? sql`` : sql`and origin <> ${keep}`;
  const { rows } = await sql<{ n: number }>`
    with revoked as (
      update api_keys set revoked_at = now() where user_id = ${userId} and revoked_at is null ${kept} returning id
    )
    update users set live_key_count = live_key_count - (select count(*) from revoked)
    where id = ${userId}
    returning (select count(*)::int from revoked) as n`.execute(db);
  return rows[0]?.n ?? 0;
}

export async function listLiveApiKeys(db: Kysely<Database>, userId: number): Promise<ApiKey[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * Finds the live key and its user for a presented bearer token; `undefined` when the token names no live key.
 * Account gates are the caller's decision. With a `cache`, a recent look-up is answered from memory.
 */
export async function findApiKey(db: Kysely<Database>, token: string, cache?: KeyCache): Promise<KeyAuthentication | undefined> {
  if (!token.startsWith('nds_') || token.length > 200) return undefined;
  const keyHash = sha256Hex(token);
  const cached = cache?.get(keyHash);
  if (cached) return cached;
  const generation = cache?.generation() ?? 0;
  // One round trip, found through the key_hash index. The secret itself is never compared in JS: the
  // look-up is by its hash.
  const row = await db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .selectAll('u')
    .select([
      'k.id as k_id',
      'k.name as k_name',
      'k.key_hash as k_key_hash',
      'k.prefix as k_prefix',
      'k.origin as k_origin',
      'k.created_at as k_created_at',
      'k.last_used_at as k_last_used_at',
      'k.revoked_at as k_revoked_at',
    ])
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { k_id, k_name, k_key_hash, k_prefix, k_origin, k_created_at, k_last_used_at, k_revoked_at, ...user } = row;
  const key: ApiKey = { id: k_id, user_id: user.id, name: k_name, key_hash: k_key_hash, prefix: k_prefix, origin: k_origin, created_at: k_created_at, last_used_at: k_last_used_at, revoked_at: k_revoked_at };
  const found = { user: user as User, key };
  cache?.set(keyHash, found, generation);
  return found;
}

/** Records use of a key, at most once a minute per key, without holding up the request. */
export function touchApiKey(db: Kysely<Database>, key: ApiKey, now: Date): Promise<unknown> | undefined {
  if (key.last_used_at && now.getTime() - new Date(key.last_used_at).getTime() < 60_000) return undefined;
  // Also noted on the (possibly cached) row, so the next requests within the minute write nothing.
  key.last_used_at = now;
  return db.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', key.id).execute();
}

export interface PresentedKey {
  id: number;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  current: boolean;
}

export function presentApiKey(key: ApiKey, currentKeyId?: number): PresentedKey {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    created_at: new Date(key.created_at).toISOString(),
    last_used_at: key.last_used_at ? new Date(key.last_used_at).toISOString() : null,
    current: key.id === currentKeyId,
  };
}
