/**
 * Storage quotas (decision 0051): the bytes the datasets an account owns may hold, all of them
 * (STORAGE_QUOTA_BYTES) and its sandbox datasets together (SANDBOX_STORAGE_QUOTA_BYTES). Room is granted
 * before a byte is sent, one object key at a time, and the grants are the ledger (`storage_grants`):
 * - content (`objects/<sha256>`): a presigned PUT or a git-lfs upload action, bound to its size; a write
 *   through an object credential; a version's copy of a file from git;
 * - an upload in parts (`uploads/<upload id>`): the file's size from its start; moved to its content's key
 *   when completed, given back when aborted or swept;
 * - the hosted repository (`git`): its size on disk after each push, and a push may send no more than is left.
 * A store's presigned URL is used without the server seeing it, so what counts is what was granted: a grant
 * whose URL has expired is looked up in the store by the sweep (`sweepStorageGrants`), then confirmed, or
 * dropped when nothing came. A key granted twice counts once. Reservations of one account are taken one at a
 * time (its `users` row is locked), so concurrent requests cannot together pass the quota.
 * The owner pays for what members upload; an administrator's datasets are not limited, and an administrator may
 * set one account's limit in place of the settings (`users.storage_quota_bytes`, `accounts/admin-users.ts`).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { lockUser } from '../accounts/users.js';
import type { Deps } from '../deps.js';
import { bytesText } from '../core/byte-size.js';
import { NdsError } from '../core/errors.js';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { repositoryBytes } from '../git/repository-dir.js';
import { isAdmin } from './dataset-access.js';
import { datasetsOwnedBy, findDatasetRow } from './dataset-queries.js';
import { mapLimit } from '../core/map-limit.js';

type QuotaDeps = Pick<Deps, 'db' | 'config' | 'clock'>;

const FOREIGN_KEY_VIOLATION = '23503';

export interface StorageGrant {
  /** The key under the dataset's prefix: `objects/<sha256>`, `uploads/<upload id>` or `git`. */
  key: string;
  bytes: number;
}

/** What an account holds and may hold; a quota of null is no limit. */
export interface StorageUse {
  used_bytes: number;
  quota_bytes: number | null;
  sandbox: { used_bytes: number; quota_bytes: number | null };
}

export const contentGrantKey = (sha256: string) => `objects/${sha256}`;
export const uploadGrantKey = (uploadId: string) => `uploads/${uploadId}`;
export const GIT_GRANT_KEY = 'git';

interface Owner {
  id: number;
  admin: boolean;
  /** The account's own limit, set by an administrator (0: none); null: the settings. */
  quota: number | null;
  sandbox: boolean;
}

/** The dataset's owner, its row locked for the rest of `trx` (reservations of one account go one at a time). */
async function lockOwner(trx: Transaction<Database>, datasetId: string): Promise<Owner> {
  const dataset = await findDatasetRow(trx, datasetId);
  if (!dataset) throw new NdsError('dataset_not_found');
  const owner = await lockUser(trx, dataset.owner_id);
  return { id: dataset.owner_id, admin: owner !== undefined && isAdmin(owner), quota: owner?.storage_quota_bytes ?? null, sandbox: dataset.sandbox };
}

/** The bytes granted to the datasets `ownerId` owns: all of them, and its sandbox ones. */
async function usedBy(db: Kysely<Database>, ownerId: number): Promise<{ all: number; sandbox: number }> {
  const owned = await datasetsOwnedBy(db, ownerId);
  if (owned.length === 0) return { all: 0, sandbox: 0 };
  const rows = await db.selectFrom('dataset_storage').select(['dataset_id', 'bytes']).where('dataset_id', 'in', owned.map((d) => d.id)).execute();
  const sandbox = new Set(owned.filter((d) => d.sandbox).map((d) => d.id));
  const used = { all: 0, sandbox: 0 };
  for (const r of rows) {
    used.all += Number(r.bytes);
    if (sandbox.has(r.dataset_id)) used.sandbox += Number(r.bytes);
  }
  return used;
}

/**
 * The limits that bind a dataset of `owner` (0: none): all its datasets, and its sandbox ones. An account's own
 * limit, set by an administrator, stands for both; an administrator's datasets have none.
 */
function limitsOf(config: QuotaDeps['config'], owner: Pick<Owner, 'admin' | 'quota'>): { all: number; sandbox: number } {
  if (owner.quota !== null) return { all: Number(owner.quota), sandbox: Number(owner.quota) };
  return owner.admin ? { all: 0, sandbox: 0 } : { all: config.storageQuotaBytes, sandbox: config.sandboxStorageQuotaBytes };
}

/** Refuses `asked` more bytes for a dataset of `owner` that would pass a limit; returns the room left after them (Infinity: no limit). */
function checkRoom(limits: { all: number; sandbox: number }, used: { all: number; sandbox: number }, sandbox: boolean, asked: number): number {
  const bounds = [{ limit: limits.all, used: used.all, what: "the account's datasets" }];
  if (sandbox) bounds.push({ limit: limits.sandbox, used: used.sandbox, what: "the account's sandbox datasets" });
  let left = Infinity;
  for (const b of bounds) {
    if (b.limit === 0) continue;
    if (b.used + asked > b.limit) {
      throw new NdsError('storage_quota_exceeded', {
        details: [`${b.what} hold ${bytesText(b.used)} of their ${bytesText(b.limit)}; this needs ${bytesText(asked)} more`],
        extra: { used_bytes: b.used, quota_bytes: b.limit, asked_bytes: asked },
      });
    }
    left = Math.min(left, b.limit - b.used - asked);
  }
  return left;
}

/**
 * Grants `datasetId` room for `grants` until `expiresAt` (`confirmed`: the bytes are stored already), or
 * throws `storage_quota_exceeded` and grants nothing. Keys granted before count once; their time is
 * extended to `expiresAt`.
 */
export async function reserveStorage(deps: QuotaDeps, datasetId: string, grants: StorageGrant[], options: { expiresAt: Date; confirmed?: boolean }): Promise<void> {
  if (grants.length === 0) return;
  await deps.db.transaction().execute(async (trx) => {
    const owner = await lockOwner(trx, datasetId);
    const keys = [...new Set(grants.map((g) => g.key))];
    const held = new Set(
      (await trx.selectFrom('storage_grants').select('object_key').where('dataset_id', '=', datasetId).where('object_key', 'in', keys).execute()).map((r) => r.object_key),
    );
    const fresh = new Map<string, number>();
    for (const g of grants) if (!held.has(g.key)) fresh.set(g.key, g.bytes);
    const asked = [...fresh.values()].reduce((s, b) => s + b, 0);
    const limits = limitsOf(deps.config, owner);
    if (asked > 0 && (limits.all > 0 || (owner.sandbox && limits.sandbox > 0))) checkRoom(limits, await usedBy(trx, owner.id), owner.sandbox, asked);
    if (held.size > 0) {
      await trx
        .updateTable('storage_grants')
        .set({ expires_at: sql<Date>`greatest(expires_at, ${options.expiresAt})`, ...(options.confirmed ? { confirmed: true } : {}) })
        .where('dataset_id', '=', datasetId)
        .where('object_key', 'in', [...held])
        .execute();
    }
    if (fresh.size > 0) {
      await trx
        .insertInto('storage_grants')
        .values([...fresh].map(([key, bytes]) => ({ dataset_id: datasetId, object_key: key, bytes, confirmed: options.confirmed ?? false, expires_at: options.expiresAt })))
        .execute();
    }
  }).catch((err: unknown) => {
    // Deleted between its look-up and the grant: as if it had never been there.
    if ((err as { code?: string }).code === FOREIGN_KEY_VIOLATION) throw new NdsError('dataset_not_found', { cause: err });
    throw err;
  });
}

/** The bytes a dataset may still take before a limit of its owner binds (Infinity: none binds). */
export async function storageLeft(deps: QuotaDeps, datasetId: string): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const owner = await lockOwner(trx, datasetId);
    const limits = limitsOf(deps.config, owner);
    if (limits.all === 0 && !(owner.sandbox && limits.sandbox > 0)) return Infinity;
    const used = await usedBy(trx, owner.id);
    const left = (limit: number, use: number) => (limit === 0 ? Infinity : Math.max(0, limit - use));
    return Math.min(left(limits.all, used.all), owner.sandbox ? left(limits.sandbox, used.sandbox) : Infinity);
  });
}

/** Records that key `key` of the dataset holds `bytes` now (the repository after a push): no limit is checked, the bytes are there. */
export async function recordStoredBytes(deps: QuotaDeps, datasetId: string, key: string, bytes: number): Promise<void> {
  try {
    await deps.db
      .insertInto('storage_grants')
      .values({ dataset_id: datasetId, object_key: key, bytes, confirmed: true, expires_at: deps.clock.now() })
      .onConflict((oc) => oc.columns(['dataset_id', 'object_key']).doUpdateSet({ bytes, confirmed: true }))
      .execute();
  } catch (err) {
    // A dataset deleted meanwhile took its objects and grants with it: nothing to record.
    if ((err as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw err;
  }
}

/** Records the size of the dataset's hosted repository in `dir` on disk, after a push. */
export async function recordRepositoryBytes(deps: QuotaDeps, datasetId: string, dir: string): Promise<void> {
  await recordStoredBytes(deps, datasetId, GIT_GRANT_KEY, await repositoryBytes(dir));
}

/** The grant of key `key` is stored: its bytes count from now on whatever the sweep finds. */
export async function confirmStorage(deps: Pick<Deps, 'db'>, datasetId: string, key: string): Promise<void> {
  await deps.db.updateTable('storage_grants').set({ confirmed: true }).where('dataset_id', '=', datasetId).where('object_key', '=', key).where('confirmed', '=', false).execute();
}

/** Gives back the grant of key `key` (an upload aborted or swept). */
export async function releaseStorage(deps: Pick<Deps, 'db'>, datasetId: string, key: string): Promise<void> {
  await deps.db.deleteFrom('storage_grants').where('dataset_id', '=', datasetId).where('object_key', '=', key).execute();
}

/** An upload in parts became content `sha256`: its grant moves to the content's key (counted once if it was there). */
export async function moveStorage(deps: Pick<Deps, 'db'>, datasetId: string, from: string, to: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const moved = await trx.deleteFrom('storage_grants').where('dataset_id', '=', datasetId).where('object_key', '=', from).returning(['bytes', 'expires_at']).executeTakeFirst();
    if (!moved) return;
    await trx
      .insertInto('storage_grants')
      .values({ dataset_id: datasetId, object_key: to, bytes: Number(moved.bytes), confirmed: true, expires_at: moved.expires_at })
      .onConflict((oc) => oc.columns(['dataset_id', 'object_key']).doUpdateSet({ confirmed: true }))
      .execute();
  });
}

/** What `userId`'s datasets hold, and their limits. */
export async function storageUseOf(deps: QuotaDeps, user: User): Promise<StorageUse> {
  const used = await usedBy(deps.db, user.id);
  const limits = limitsOf(deps.config, { admin: isAdmin(user), quota: user.storage_quota_bytes == null ? null : Number(user.storage_quota_bytes) });
  return { used_bytes: used.all, quota_bytes: limits.all || null, sandbox: { used_bytes: used.sandbox, quota_bytes: limits.sandbox || null } };
}

/** A PUT begun just before its URL expired may still be arriving: its grant is looked at an hour later. */
const SWEEP_GRACE_MS = 3600_000;

/**
 * Settles grants whose time has passed unconfirmed, `batch` at a time until none is left: content found in the
 * store is confirmed (with its stored size), the rest dropped (a URL that expired unused, an upload in parts
 * that was swept). Returns how many were dropped.
 */
export async function sweepStorageGrants(deps: QuotaDeps & Pick<Deps, 'objects'>, batch = 500): Promise<number> {
  const dueBefore = new Date(deps.clock.now().getTime() - SWEEP_GRACE_MS);
  let dropped = 0;
  for (;;) {
    const due = await deps.db
      .selectFrom('storage_grants')
      .select(['dataset_id', 'object_key'])
      .where('confirmed', '=', false)
      .where('expires_at', '<=', dueBefore)
      .orderBy('expires_at')
      .limit(batch)
      .execute();
    // Each look-up is a round trip to an S3 store: 16 at a time.
    const found = await mapLimit(due, 16, async (g) => (g.object_key.startsWith('objects/') ? deps.objects.head(`${g.dataset_id}/${g.object_key}`) : undefined));
    for (const [i, g] of due.entries()) {
      const stored = found[i];
      const row = deps.db.updateTable('storage_grants').where('dataset_id', '=', g.dataset_id).where('object_key', '=', g.object_key);
      if (stored) await row.set({ confirmed: true, bytes: stored.size }).execute();
      else {
        await deps.db.deleteFrom('storage_grants').where('dataset_id', '=', g.dataset_id).where('object_key', '=', g.object_key).where('confirmed', '=', false).execute();
        dropped++;
      }
    }
    if (due.length < batch) return dropped;
  }
}
