/**
 * Creating a dataset. Who gets what (docs/datasets.md: "sandbox datasets for everyone who has not completed
 * sandbox training"; seed: real uploads need an approved account that completed the sandbox):
 * - an account that has not completed the training gets a sandbox dataset (`sb` + 6 digits); asking for a
 *   real one (`sandbox: false`) answers `sandbox_required`, or `upload_access_required` when not approved;
 * - an approved account that completed it gets a real dataset (`nd` + 6 digits), or a sandbox one on request;
 * - a verified (not approved) account that completed it may still make sandbox datasets, not real ones;
 * - admins and service accounts are exempt from the training.
 * New datasets are private; only an admin may create one public at once (mirrors of public data).
 */
import { sql, type Kysely } from 'kysely';
import type { Config } from '../core/config.js';
import { lockUser } from '../accounts/users.js';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { isNdsError, NdsError } from '../core/errors.js';
import type { RateLimiter, Spent } from '../core/rate-limiter.js';
import { assertMayUseRealDatasets, findDataset, isAdmin } from './dataset-access.js';
import { countSandboxDatasets, insertDatasetRow, type Dataset } from './dataset-queries.js';
import { assertExternalIdsFree, type DatasetFields } from './dataset-fields.js';
import { sourceRepoToStore, type HostLookup, type SourceRepoSettings } from './source-repo.js';

/** What creation depends on: the sandbox cap and the rules of `source_repo`. */
export type CreateDatasetSettings = Pick<Config, 'sandboxDatasetsMax'> & SourceRepoSettings;

/** The columns a new dataset starts without: no subjects counted, no version, no publication, no serving copy. */
export const unsetDatasetColumns = {
  n_subjects: null,
  latest_version: null,
  doi: null,
  concept_doi: null,
  publication_status: null,
  zarr_status: null,
  zarr_converted_at: null,
  zarr_store_count: null,
  zarr_index_etag: null,
  zarr_source_commit: null,
  zarr_error: null,
} as const;

export interface NewDatasetInput extends DatasetFields {
  name: string;
  visibility?: 'public' | 'private';
  /** Ask explicitly for a sandbox (true) or a real (false) dataset; default: what the account may have. */
  sandbox?: boolean;
}

export function wantsSandbox(user: User, requested: boolean | undefined): boolean {
  if (requested === true) return true;
  const exempt = isAdmin(user) || user.kind === 'service';
  const trained = exempt || user.sandbox_completed_at !== null;
  if (requested === undefined) return !trained;
  assertMayUseRealDatasets(user);
  return false;
}

/**
 * Takes one of the sandbox datasets `user` may make in a day (`dataset-limits.ts`): `/sandbox/reset` frees what
 * an account holds, but every dataset made takes a new number from the sandbox ids, which a loop of creations
 * and resets would use up for everyone. Past the limit, 429 `rate_limited` with `Retry-After`.
 */
async function spendSandboxCreation(limiter: RateLimiter, user: User): Promise<Spent> {
  try {
    return await limiter.spend(String(user.id));
  } catch (err) {
    if (!isNdsError(err, 'rate_limited')) throw err;
    const hours = Math.ceil(Number(err.headers['Retry-After']) / 3600);
    throw new NdsError('rate_limited', {
      message: `This account has made ${limiter.rule.points} sandbox datasets in a day, the most it may; it may make another in ${hours} hour${hours === 1 ? '' : 's'}.`,
      headers: err.headers,
    });
  }
}

/**
 * Creates a dataset of `user`'s. `sandboxCreations` limits the sandbox datasets an account (not an admin) makes
 * over time; `undefined` only where no person asks (the demo's service account, which makes a real dataset).
 */
export async function createDataset(db: Kysely<Database>, user: User, input: NewDatasetInput, settings: CreateDatasetSettings, sandboxCreations: RateLimiter | undefined, lookup?: HostLookup): Promise<Dataset> {
  const sandbox = wantsSandbox(user, input.sandbox);
  if (!sandbox && !isAdmin(user)) assertMayUseRealDatasets(user);
  const visibility = input.visibility ?? 'private';
  if (visibility === 'public') {
    if (!isAdmin(user)) throw new NdsError('admin_required', { message: 'Only an administrator may create a public dataset; others publish through a publication request.' });
    if (sandbox) throw new NdsError('bad_request', { message: 'A sandbox dataset is always private.' });
  }
  const externalIds = input.external_ids ?? [];
  await assertExternalIdsFree(db, externalIds, undefined, user);
  const sourceRepo = input.source_repo ? await sourceRepoToStore(input.source_repo, undefined, settings, lookup) : null;
  // Spent before, and given back when nothing is made (the cap on what the account holds, say): a refused
  // creation takes no number, so it does not count.
  const spent = sandbox && !isAdmin(user) && sandboxCreations ? await spendSandboxCreation(sandboxCreations, user) : undefined;
  // The owner's row is locked while sandbox datasets are counted, so concurrent creations cannot pass the cap together.
  const id = await db.transaction().execute(async (trx) => {
    if (sandbox && !isAdmin(user)) {
      await lockUser(trx, user.id);
      const held = await countSandboxDatasets(trx, user.id);
      if (held >= settings.sandboxDatasetsMax) {
        throw new NdsError('too_many_sandbox_datasets', { message: `This account already holds ${held} sandbox datasets (the most it may); reset the sandbox or delete one first.` });
      }
    }
    const sequence = sandbox ? 'sandbox_number' : 'dataset_number';
    const { n } = await sql<{ n: string }>`select nextval(${sequence}::regclass)::text as n`.execute(trx).then((r) => r.rows[0]);
    const id = `${sandbox ? 'sb' : 'nd'}${n.padStart(6, '0')}`;
    if (id.length !== 8) throw new NdsError('conflict', { message: 'The dataset number space is exhausted.' });
    await insertDatasetRow(trx, {
      id,
      name: input.name,
      description: input.description ?? '',
      owner_id: user.id,
      visibility,
      sandbox,
      source_repo: sourceRepo,
      external_ids: externalIds,
      license: input.license ?? null,
      authors: input.authors ?? [],
      keywords: input.keywords ?? [],
      ...unsetDatasetColumns,
    });
    return id;
  }).catch(async (err: unknown) => {
    await spent?.giveBack().catch(() => undefined);
    throw err;
  });
  return (await findDataset(db, id))!;
}
