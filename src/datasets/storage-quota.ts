/**
 * Storage quotas (decision 0051): the bytes the datasets an account owns may hold, all of them
 * (STORAGE_QUOTA_BYTES) and its sandbox datasets together (SANDBOX_STORAGE_QUOTA_BYTES). Room is granted
 * before a byte is sent, one object key at a time, and the grants are the ledger (`storage_grants`):
 * - content (`objects/<sha256>`): a presigned PUT or a git-lfs upload action, bound to its size; a write
 *   through an object credential; a version's copy of a file from git;
 * - an upload in parts (`uploads/<upload id>`): the file's size from its start; moved to its content's key
 *   when completed, given back when aborted or swept;
 * - the hosted repository (`git`): its size on disk after each push; a push is granted what it may send
 *   (`push/<random>`, no more than is left) while it runs;
 * - a version's manifest (`versions/<version>`): the client's list of files, up to a million entries.
 * A store's presigned URL is used without the server seeing it, so what counts is what was granted: a grant
 * whose URL has expired is looked up in the store by the sweep (`sweepStorageGrants`), then confirmed, or
 * dropped when nothing came. A key granted twice counts once, at its largest size until stored. Reservations of one account are taken one at a
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
import { isForeignKeyViolation } from '../db/sql-errors.js';
import { repositoryBytes, repositoryDir } from '../git/repository-dir.js';
import { isAdmin } from './dataset-access.js';
import { repositoriesOnDisk } from './hosted-repository.js';
import { datasetsOwnedBy, findDatasetRow, holdDatasetRow } from './dataset-queries.js';
import { mapLimit } from '../core/map-limit.js';

type QuotaDeps = Pick<Deps, 'db' | 'config' | 'clock'>;

export interface StorageGrant {
  /** The key under the dataset's prefix: `objects/<sha256>`, `uploads/<upload id>`, `git`, `push/<random>` or `versions/<version>`. */
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
/** A version's manifest (`<id>/versions/<version>/manifest.json`). */
export const manifestGrantKey = (version: string) => `versions/${version}`;
export const GIT_GRANT_KEY = 'git';

/** The owner of the dataset a reservation is for, and whether that dataset is a sandbox one. */
interface Owner {
  user: User;
  sandbox: boolean;
}

/** The dataset's owner, its row locked for the rest of `trx` (reservations of one account go one at a time). */
async function lockOwner(trx: Transaction<Database>, datasetId: string): Promise<Owner> {
  const dataset = await findDatasetRow(trx, datasetId);
  const user = dataset && (await lockUser(trx, dataset.owner_id));
  if (!dataset || !user) throw new NdsError('dataset_not_found');
  return { user, sandbox: dataset.sandbox };
}

/** The bytes granted to the datasets `ownerId` owns: all of them, and its sandbox ones. */
async function usedBy(db: Kysely<Database>, ownerId: number): Promise<{ all: number; sandbox: number }> {
  const owned = await datasetsOwnedBy(db, ownerId);
  if (owned.length === 0) return { all: 0, sandbox: 0 };
  const rows = await db.selectFrom('dataset_storage').select(['dataset_id', 'bytes']).where('dataset_id', 'in', owned.map((d) => d.id)).execute();
  const sandbox = new Set(owned.filter((d) => d.sandbox).map((d) => d.id));
  const used = { all: 0, sandbox: 0 };
  for (const r of rows) {
    used.all += r.bytes;
    if (sandbox.has(r.dataset_id)) used.sandbox += r.bytes;
  }
  return used;
}

/**
 * The limits that bind `user`'s datasets (0: none): all of them, and its sandbox ones. An account's own limit,
 * set by an administrator, stands for both; an administrator's datasets have none.
 */
function limitsOf(config: QuotaDeps['config'], user: User): { all: number; sandbox: number } {
  const own = user.storage_quota_bytes ?? null;
  if (own !== null) return { all: own, sandbox: own };
  return isAdmin(user) ? { all: 0, sandbox: 0 } : { all: config.storageQuotaBytes, sandbox: config.sandboxStorageQuotaBytes };
}

/** The limits a write to a dataset of `owner` must stay under, with what each holds now; those of 0 (none) left out. */
async function boundsOf(trx: Transaction<Database>, config: QuotaDeps['config'], owner: Owner): Promise<Array<{ limit: number; used: number; what: string }>> {
  const limits = limitsOf(config, owner.user);
  if (limits.all === 0 && !(owner.sandbox && limits.sandbox > 0)) return [];
  const used = await usedBy(trx, owner.user.id);
  const bounds = [{ limit: limits.all, used: used.all, what: "the account's datasets" }];
  if (owner.sandbox) bounds.push({ limit: limits.sandbox, used: used.sandbox, what: "the account's sandbox datasets" });
  return bounds.filter((b) => b.limit > 0);
}

/** Runs `fn` in a transaction holding the lock of `datasetId`'s owner; a dataset deleted meanwhile is `dataset_not_found`. */
async function withOwner<T>(deps: QuotaDeps, datasetId: string, fn: (trx: Transaction<Database>, owner: Owner) => Promise<T>): Promise<T> {
  return deps.db
    .transaction()
    .execute(async (trx) => fn(trx, await lockOwner(trx, datasetId)))
    .catch((err: unknown) => {
      throw isForeignKeyViolation(err) ? new NdsError('dataset_not_found', { cause: err }) : err;
    });
}

/**
 * Grants `datasetId` room for `grants` until `expiresAt`, or throws `storage_quota_exceeded` and grants
 * nothing. A key granted before counts once, at the larger of its
 * sizes (a URL asked for again, for the same content, signs the size asked now), and its time is extended to
 * `expiresAt`. Returns the keys this call granted first (a caller whose write then fails may give them back
 * with `releaseStorage`).
 */
export async function reserveStorage(deps: QuotaDeps, datasetId: string, grants: StorageGrant[], options: { expiresAt: Date }): Promise<string[]> {
  if (grants.length === 0) return [];
  return withOwner(deps, datasetId, async (trx, owner) => {
    const wanted = new Map<string, number>();
    for (const g of grants) wanted.set(g.key, Math.max(g.bytes, wanted.get(g.key) ?? 0));
    const held = new Map(
      (await trx.selectFrom('storage_grants').select(['object_key', 'bytes']).where('dataset_id', '=', datasetId).where('object_key', 'in', [...wanted.keys()]).execute()).map((r) => [r.object_key, r.bytes]),
    );
    let asked = 0;
    for (const [key, bytes] of wanted) asked += Math.max(0, bytes - (held.get(key) ?? 0));
    const passed = asked > 0 ? (await boundsOf(trx, deps.config, owner)).find((b) => b.used + asked > b.limit) : undefined;
    if (passed) {
      // A member uploading to the owner's dataset learns that the room is short, not how the owner's datasets,
      // private ones included, fill it.
      throw new NdsError('storage_quota_exceeded', {
        details: [`the storage quota of ${datasetId}'s owner leaves too little room for this (${bytesText(asked)})`],
        extra: { asked_bytes: asked },
        readableBy: {
          userId: owner.user.id,
          details: [`${passed.what} hold ${bytesText(passed.used)} of their ${bytesText(passed.limit)}; this needs ${bytesText(asked)} more`],
          extra: { used_bytes: passed.used, quota_bytes: passed.limit },
        },
      });
    }
    const rows = [...wanted].map(([key, bytes]) => ({ dataset_id: datasetId, object_key: key, bytes, expires_at: options.expiresAt }));
    await trx
      .insertInto('storage_grants')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['dataset_id', 'object_key']).doUpdateSet({
          bytes: sql<number>`greatest(storage_grants.bytes, excluded.bytes)`,
          expires_at: sql<Date>`greatest(storage_grants.expires_at, excluded.expires_at)`,
        }),
      )
      .execute();
    return [...wanted.keys()].filter((key) => !held.has(key));
  });
}

/**
 * Grants `key` of `datasetId` as much room as is left, up to `most` bytes, until `expiresAt`: what a push may
 * send (taken in the same transaction as the look at what is left, so that pushes and uploads at once cannot
 * each be given the same room). Returns the bytes granted: 0 when nothing is left (no grant is made then).
 */
export async function reserveUpTo(deps: QuotaDeps, datasetId: string, key: string, most: number, expiresAt: Date): Promise<number> {
  return withOwner(deps, datasetId, async (trx, owner) => {
    const bytes = Math.min(most, ...(await boundsOf(trx, deps.config, owner)).map((b) => Math.max(0, b.limit - b.used)));
    if (bytes > 0) await trx.insertInto('storage_grants').values({ dataset_id: datasetId, object_key: key, bytes, expires_at: expiresAt }).execute();
    return bytes;
  });
}

/** Sets key `key` of the dataset to `bytes`, stored (through `db`, or a transaction). */
function upsertStored(db: Kysely<Database>, datasetId: string, key: string, bytes: number, now: Date) {
  return db
    .insertInto('storage_grants')
    .values({ dataset_id: datasetId, object_key: key, bytes, confirmed: true, expires_at: now })
    .onConflict((oc) => oc.columns(['dataset_id', 'object_key']).doUpdateSet({ bytes, confirmed: true }))
    .execute();
}

/** A dataset deleted meanwhile took its objects and grants with it: there is nothing to record then. */
function unlessDatasetGone(err: unknown): void {
  if (!isForeignKeyViolation(err)) throw err;
}

/** Records that key `key` of the dataset holds `bytes` now: no limit is checked, the bytes are there. */
export async function recordStoredBytes(deps: QuotaDeps, datasetId: string, key: string, bytes: number): Promise<void> {
  await upsertStored(deps.db, datasetId, key, bytes, deps.clock.now()).catch(unlessDatasetGone);
}

/**
 * A write through this server has begun for key `key` (a folder store's presigned URL or object credential):
 * an unconfirmed grant of it is kept until `until`, so that the sweep does not give back the room of a body
 * still arriving. Returns the grant's end before, to `restoreGrant` when the write fails; undefined when
 * there was no unconfirmed grant to keep.
 */
export async function holdGrantWhileWriting(deps: Pick<Deps, 'db'>, datasetId: string, key: string, until: Date): Promise<Date | undefined> {
  return deps.db.transaction().execute(async (trx) => {
    const grant = await trx.selectFrom('storage_grants').select('expires_at').where('dataset_id', '=', datasetId).where('object_key', '=', key).where('confirmed', '=', false).forUpdate().executeTakeFirst();
    if (!grant || grant.expires_at >= until) return undefined;
    await trx.updateTable('storage_grants').set({ expires_at: until }).where('dataset_id', '=', datasetId).where('object_key', '=', key).execute();
    return grant.expires_at;
  });
}

/** A held write failed: its grant ends when it did before (unless another request extended it since). */
export async function restoreGrant(deps: Pick<Deps, 'db'>, datasetId: string, key: string, held: Date, before: Date): Promise<void> {
  await deps.db.updateTable('storage_grants').set({ expires_at: before }).where('dataset_id', '=', datasetId).where('object_key', '=', key).where('confirmed', '=', false).where('expires_at', '=', held).execute();
}

/**
 * Counts content found in the store that the ledger has no row for: a PUT to a presigned S3 URL that began
 * before the URL expired and ended after the sweep had given its room back (the server never sees such a PUT).
 * Called where stored content is answered `present` or listed in a version, so that it counts from then on.
 * Rows there already (granted, or stored) are left as they are; no limit is checked, the bytes are there.
 */
export async function countStoredContent(deps: QuotaDeps, datasetId: string, contents: ReadonlyArray<{ sha256: string; size: number }>): Promise<void> {
  const sizes = new Map(contents.map((c) => [c.sha256, c.size]));
  const now = deps.clock.now();
  const rows = [...sizes].map(([sha256, bytes]) => ({ dataset_id: datasetId, object_key: contentGrantKey(sha256), bytes, confirmed: true, expires_at: now }));
  for (let at = 0; at < rows.length; at += 1000) {
    await deps.db
      .insertInto('storage_grants')
      .values(rows.slice(at, at + 1000))
      .onConflict((oc) => oc.columns(['dataset_id', 'object_key']).doNothing())
      .execute()
      .catch(unlessDatasetGone);
  }
}

/**
 * Records the size of the dataset's hosted repository in `dir` on disk, after a push: measured (by `measure`,
 * its size on disk when left out) and written under the dataset row's lock, so that of two pushes ending at
 * once the later measurement is written last, never an older one over it. A dataset deleted meanwhile: nothing.
 */
export async function recordRepositoryBytes(deps: QuotaDeps, datasetId: string, dir: string, measure: (dir: string) => Promise<number> = repositoryBytes): Promise<void> {
  await deps.db
    .transaction()
    .execute(async (trx) => {
      await holdDatasetRow(trx, datasetId, 'exclusive');
      await upsertStored(trx, datasetId, GIT_GRANT_KEY, await measure(dir), deps.clock.now());
    })
    .catch(unlessDatasetGone);
}

/**
 * Records the size of each hosted repository on this node's disk that the ledger has none for (one pushed
 * before the ledger, or whose size was never recorded): run at start, so that it counts before its next push.
 * Returns how many were measured.
 */
export async function measureUnrecordedRepositories(deps: QuotaDeps): Promise<number> {
  let measured = 0;
  for (const id of await repositoriesOnDisk(deps.config.gitDir)) {
    const recorded = await deps.db.selectFrom('storage_grants').select('bytes').where('dataset_id', '=', id).where('object_key', '=', GIT_GRANT_KEY).executeTakeFirst();
    if (recorded) continue;
    await recordRepositoryBytes(deps, id, repositoryDir(deps.config.gitDir, id));
    measured++;
  }
  return measured;
}

/**
 * Gives back the grant of key `key` (an upload aborted or swept, a push ended). With `grantedUntil`, only a
 * grant this caller's `reserveStorage` made first for a write that then failed: one still unconfirmed and
 * ending then (not extended by another request since).
 */
export async function releaseStorage(deps: Pick<Deps, 'db'>, datasetId: string, key: string, grantedUntil?: Date): Promise<void> {
  let grant = deps.db.deleteFrom('storage_grants').where('dataset_id', '=', datasetId).where('object_key', '=', key);
  if (grantedUntil) grant = grant.where('confirmed', '=', false).where('expires_at', '=', grantedUntil);
  await grant.execute();
}

/**
 * An upload in parts of `bytes` became content `to`: the content is recorded as stored with its size (whether
 * or not the upload's own grant is still there) and the upload's grant `from` is given back, in one transaction.
 */
export async function moveStorage(deps: QuotaDeps, datasetId: string, from: string, to: string, bytes: number): Promise<void> {
  await deps.db
    .transaction()
    .execute(async (trx) => {
      await upsertStored(trx, datasetId, to, bytes, deps.clock.now());
      await trx.deleteFrom('storage_grants').where('dataset_id', '=', datasetId).where('object_key', '=', from).execute();
    })
    .catch(unlessDatasetGone);
}

/** What `user`'s datasets hold, and their limits. */
export async function storageUseOf(deps: QuotaDeps, user: User): Promise<StorageUse> {
  const used = await usedBy(deps.db, user.id);
  const limits = limitsOf(deps.config, user);
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
      if (stored) {
        await deps.db
          .updateTable('storage_grants')
          .set({ confirmed: true, bytes: stored.size })
          .where('dataset_id', '=', g.dataset_id)
          .where('object_key', '=', g.object_key)
          .execute();
      } else {
        // Only while still due: a URL asked for again meanwhile extended the grant, and its bytes may come yet.
        const gone = await deps.db
          .deleteFrom('storage_grants')
          .where('dataset_id', '=', g.dataset_id)
          .where('object_key', '=', g.object_key)
          .where('confirmed', '=', false)
          .where('expires_at', '<=', dueBefore)
          .executeTakeFirst();
        dropped += Number(gone.numDeletedRows);
      }
    }
    if (due.length < batch) return dropped;
  }
}
