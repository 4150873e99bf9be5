/**
 * PATCH of a dataset by its owner, a maintainer or an admin. Visibility only moves public → private here, by an admin,
 * and then the gateway drops what it cached (`hooks.datasetVisibilityChanged`), its pending publication request is
 * closed and the owner is mailed (`publication-closing.ts`); private → public happens only through publication approval.
 */
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { findDataset, isAdmin, maintainableDataset } from './dataset-access.js';
import { holdDatasetRow, updateDatasetFields, type Dataset } from './dataset-queries.js';
import { announceTakedown, closePendingPublication } from './publication-closing.js';
import { assertExternalIdsFree, type DatasetFields } from './dataset-fields.js';
import { sourceRepoToStore, type HostLookup } from './source-repo.js';

export interface DatasetPatch extends DatasetFields {
  visibility?: 'public' | 'private';
  /** Why an administrator makes the dataset private: mailed to its owner; only with `visibility: 'private'`. */
  visibility_reason?: string;
}

export async function updateDataset(deps: Pick<Deps, 'db' | 'clock' | 'hooks' | 'log' | 'config' | 'mailer'>, actor: Actor, id: string, patch: DatasetPatch, lookup?: HostLookup): Promise<Dataset> {
  const { db } = deps;
  const dataset = await maintainableDataset(db, id, actor.user);
  if (patch.visibility_reason !== undefined && patch.visibility !== 'private') {
    throw new NdsError('validation_failed', { message: 'visibility_reason says why a dataset is made private: give it with visibility "private".', details: ['visibility_reason: only with visibility "private"'] });
  }
  let madePrivate = false;
  if (patch.visibility !== undefined && patch.visibility !== dataset.visibility) {
    if (patch.visibility === 'public') {
      throw new NdsError('forbidden', { message: 'A dataset becomes public only through an approved publication request.' });
    }
    if (!isAdmin(actor.user)) throw new NdsError('admin_required', { message: 'Only an administrator may make a public dataset private.' });
    madePrivate = true;
  }
  if (patch.external_ids) await assertExternalIdsFree(db, patch.external_ids, id, actor.user);
  // The row's id decides which hosted repository is "its own": a client never names one by path.
  const sourceRepo = patch.source_repo ? await sourceRepoToStore(patch.source_repo, id, deps.config, lookup) : patch.source_repo;
  const changes = {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.description !== undefined && { description: patch.description }),
    ...(patch.keywords !== undefined && { keywords: patch.keywords }),
    ...(patch.license !== undefined && { license: patch.license }),
    ...(patch.authors !== undefined && { authors: patch.authors }),
    ...(sourceRepo !== undefined && { source_repo: sourceRepo }),
    ...(patch.external_ids !== undefined && { external_ids: patch.external_ids }),
    ...(madePrivate && { visibility: 'private' as const }),
  };
  let closed: number[] = [];
  if (Object.keys(changes).length > 0) {
    const now = deps.clock.now();
    // Under the row lock an approval takes to check the visibility it read: one of the two wins, wholly.
    await db.transaction().execute(async (trx) => {
      await holdDatasetRow(trx, id, 'exclusive');
      await updateDatasetFields(trx, id, changes, now);
      if (madePrivate) {
        closed = await closePendingPublication(trx, actor, id, now, patch.visibility_reason);
        await audit(trx, actor, 'dataset.visibility', id, { from: 'public', to: 'private', ...(patch.visibility_reason && { reason: patch.visibility_reason }) });
      }
    });
  }
  if (madePrivate) {
    await announceVisibilityChanged(deps, id);
    await announceTakedown(deps, actor, id, closed, patch.visibility_reason);
  }
  return (await findDataset(db, id))!;
}

/** Tells every registered listener (the gateway cache) that a dataset is no longer public; never throws. */
export async function announceVisibilityChanged(deps: Pick<Deps, 'hooks' | 'log'>, id: string): Promise<void> {
  for (const hook of deps.hooks.datasetVisibilityChanged) {
    try {
      await hook(id);
    } catch (err) {
      deps.log.warn({ err, dataset: id }, 'datasetVisibilityChanged hook failed');
    }
  }
}
