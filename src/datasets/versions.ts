/**
 * Dataset versions: immutable snapshots. Creating one checks that every listed content is in the object
 * store, writes the manifest, records the row and moves `latest_version`/`size_bytes`, under a lock on the
 * dataset row, so two creations of one number cannot both pass (and the primary key would refuse the second).
 */
import { sql, type Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import type { User } from '../db/accounts-tables.js';
import type { DatasetVersionRow } from '../db/datasets-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { sha256Hex } from '../core/secrets.js';
import { datasetFor } from './dataset-access.js';
import { lockDatasetRow, setLatestVersion } from './dataset-queries.js';
import { contentKey, manifestKey, normalizeManifest, serializeManifest, type ManifestEntry } from './manifest.js';
import { compareSemver, isSemver } from './semver.js';
import { mapLimit } from '../core/map-limit.js';
import { isUniqueViolation } from '../db/sql-errors.js';
import { countStoredContent, manifestGrantKey, recordStoredBytes, releaseStorage, reserveStorage } from './storage-quota.js';

/** Above this many distinct contents, one listing of `<id>/objects/` is cheaper than a HEAD each. */
const LIST_THRESHOLD = 256;

export async function missingContent(deps: Pick<Deps, 'objects'>, datasetId: string, entries: ManifestEntry[]): Promise<ManifestEntry[]> {
  const shas = new Set(entries.map((e) => e.sha256));
  const present = new Map<string, number>();
  if (shas.size > LIST_THRESHOLD) {
    const prefix = `${datasetId}/objects/`;
    // Only keys directly under the prefix named by a SHA-256 are content: what else a listing holds proves nothing.
    for await (const o of deps.objects.list(prefix)) {
      const name = o.key.slice(prefix.length);
      if (/^[0-9a-f]{64}$/.test(name)) present.set(name, o.size);
    }
  } else {
    await mapLimit([...shas], 16, async (sha) => {
      const info = await deps.objects.head(contentKey(datasetId, sha));
      if (info) present.set(sha, info.size);
    });
  }
  return entries.filter((e) => present.get(e.sha256) !== e.size);
}

export interface NewVersion {
  version: string;
  manifest: ManifestEntry[];
  sourceCommit?: string | null;
  createdBy: number;
  /**
   * The account making the version by a request, when there is one: its right to maintain the dataset is asked
   * again under the row lock, so that a maintainer removed while the request ran makes no version.
   */
  madeBy?: User;
  /**
   * The version's last step, under the row lock after every check and write (an annotation commit moves its
   * repository's `main` here, so that `main` never moves for a version refused): a throw refuses the version.
   * Left out, nothing.
   */
  lastUnderLock?: () => Promise<void>;
}

export async function createVersion(deps: Pick<Deps, 'db' | 'objects' | 'clock' | 'config'>, datasetId: string, input: NewVersion): Promise<DatasetVersionRow> {
  if (!isSemver(input.version)) throw new NdsError('validation_failed', { details: ['version: a semantic version such as 1.0.0 or 1.1.0-rc.1'] });
  const manifest = normalizeManifest(input.manifest);
  const missing = await missingContent(deps, datasetId, manifest);
  if (missing.length) {
    throw new NdsError('content_missing', {
      details: missing.slice(0, 100).map((e) => `${e.path}: ${contentKey(datasetId, e.sha256)} is not in the store`),
      extra: { missing: missing.map((e) => e.path) },
    });
  }
  // Every content of the version is in the store: what the ledger missed of it counts from now on.
  await countStoredContent(deps, datasetId, manifest);
  const bytes = serializeManifest(manifest);
  const manifestSha = sha256Hex(bytes);
  const size = manifest.reduce((s, e) => s + e.size, 0);
  // The manifest is the client's bytes too (a million entries are 130 MB), and counts against the owner's
  // quota. Its room is granted before the row lock is taken (the grant locks the owner's row), and given back if
  // the version is then refused; a number taken already is refused first, so its grant is never touched.
  const takenBefore = await versionTaken(deps.db, datasetId, input.version);
  if (takenBefore !== undefined) throw versionExists(datasetId, input.version, takenBefore);
  const grant = manifestGrantKey(input.version);
  const expiresAt = new Date(deps.clock.now().getTime() + MANIFEST_GRANT_MS);
  const grantedFirst = (await reserveStorage(deps, datasetId, [{ key: grant, bytes: bytes.length }], { expiresAt })).length > 0;
  const created = await deps.db.transaction().execute(async (trx) => {
    await lockDatasetRow(trx, datasetId);
    // Under the row lock that member changes take too (`datasetForWhile`): a removal before this is seen.
    if (input.madeBy) await datasetFor(trx, datasetId, input.madeBy, 'maintain');
    const taken = await versionTaken(trx, datasetId, input.version);
    if (taken !== undefined) throw versionExists(datasetId, input.version, taken);
    // A version from a manifest identical to the latest one would be a copy under a new number: refused. A
    // version from a commit is a tag of that commit, which may repeat a tree on purpose.
    if (!input.sourceCommit) {
      const latest = (await listVersions(trx, datasetId))[0];
      if (latest && latest.manifest_sha256 === manifestSha && !latest.source_commit) {
        throw new NdsError('version_unchanged', { message: `These files are exactly those of version ${latest.version} of ${datasetId}; no version was made.`, extra: { latest_version: latest.version } });
      }
    }
    // Written while the row lock is held, so a losing creation can never overwrite the winner's manifest.
    await deps.objects.put(manifestKey(datasetId, input.version), bytes, { contentType: 'application/json', sha256: manifestSha });
    const row = await trx
      .insertInto('dataset_versions')
      .values({ dataset_id: datasetId, version: input.version, created_by: input.createdBy, source_commit: input.sourceCommit ?? null, manifest_sha256: manifestSha, file_count: manifest.length, size_bytes: size })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((err: unknown) => {
        if (isUniqueViolation(err)) throw new NdsError('version_exists', { cause: err });
        throw err;
      });
    const latest = await latestVersion(trx, datasetId);
    await setLatestVersion(trx, datasetId, { version: latest.version, sizeBytes: Number(latest.size_bytes) }, deps.clock.now());
    await input.lastUnderLock?.();
    return row;
  }).catch(async (err: unknown) => {
    if (grantedFirst) await releaseStorage(deps, datasetId, grant, expiresAt);
    throw err;
  });
  await recordStoredBytes(deps, datasetId, grant, bytes.length);
  return created;
}

/** How long a manifest's grant waits for its version before the sweep may take it back (a crash in between). */
const MANIFEST_GRANT_MS = 60 * 60 * 1000;

/**
 * The version of the dataset whose number is `version` but for case, if any: `1.0.0-RC.1` and `1.0.0-rc.1` would
 * name one DOI (DOI names ignore case), so they are one number here too (backed by a unique index on lower(version)).
 */
async function versionTaken(db: Kysely<Database>, datasetId: string, version: string): Promise<string | undefined> {
  const row = await db.selectFrom('dataset_versions').select('version').where('dataset_id', '=', datasetId).where(sql<string>`lower(version)`, '=', version.toLowerCase()).executeTakeFirst();
  return row?.version;
}

function versionExists(datasetId: string, version: string, taken: string): NdsError {
  const same = taken === version ? `Version ${version}` : `Version ${taken}, the same number as ${version} but for case,`;
  return new NdsError('version_exists', { message: `${same} of ${datasetId} already exists; a version number is never reused.` });
}

export async function listVersions(db: Kysely<Database>, datasetId: string): Promise<DatasetVersionRow[]> {
  const rows = await db.selectFrom('dataset_versions').selectAll().where('dataset_id', '=', datasetId).execute();
  return rows.sort((a, b) => compareSemver(b.version, a.version));
}

/** The highest version by semver precedence (not the newest by time). */
async function latestVersion(db: Kysely<Database>, datasetId: string): Promise<DatasetVersionRow> {
  return (await listVersions(db, datasetId))[0];
}

export async function findVersion(db: Kysely<Database>, datasetId: string, version: string | undefined): Promise<DatasetVersionRow> {
  const row = version === undefined ? (await listVersions(db, datasetId))[0] : await db.selectFrom('dataset_versions').selectAll().where('dataset_id', '=', datasetId).where('version', '=', version).executeTakeFirst();
  if (!row) throw new NdsError('version_not_found', { message: version === undefined ? `${datasetId} has no version yet.` : `${datasetId} has no version ${version}.` });
  return row;
}

/** The stored manifest of a version, checked against the hash recorded at creation. */
export async function readManifest(deps: Pick<Deps, 'objects'>, row: DatasetVersionRow): Promise<ManifestEntry[]> {
  const bytes = await deps.objects.readAll(manifestKey(row.dataset_id, row.version));
  if (!bytes) throw new Error(`manifest of ${row.dataset_id} ${row.version} is missing from the object store`);
  if (sha256Hex(bytes) !== row.manifest_sha256) throw new Error(`manifest of ${row.dataset_id} ${row.version} does not match its recorded sha256`);
  return JSON.parse(bytes.toString('utf8')) as ManifestEntry[];
}

export function presentVersion(row: DatasetVersionRow) {
  return {
    version: row.version,
    created_at: new Date(row.created_at).toISOString(),
    source_commit: row.source_commit,
    manifest_sha256: row.manifest_sha256,
    file_count: row.file_count,
    size_bytes: Number(row.size_bytes),
  };
}
