/**
 * `DELETE /admin/datasets/:id`: the row (versions, publication records, jobs and storage grants go with it
 * through their ON DELETE CASCADE foreign keys), every object under `<id>/` (uploaded content, manifests, the
 * Zarr copy), its unfinished uploads in parts (under `uploads/<id>/`), the hosted git repository, the
 * gateway's cached copy, the workers' mirrors of its source repository (announced on `DATASET_DELETED_CHANNEL`;
 * `conversion/source-mirrors.ts`), and at DataCite the draft DOIs its refused approvals left (decision 0060;
 * never a registered or findable one). Idempotent: a second call finds nothing left and still answers success, and it
 * finishes a deletion an earlier call left half done, except for drafts: their records went with the row.
 */
import { rm } from 'node:fs/promises';
import { sql } from 'kysely';
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { Deps } from '../deps.js';
import { repositoryDir } from '../git/repository-dir.js';
import { NdsError } from '../core/errors.js';
import { DATASET_ID } from './dataset-access.js';
import { deleteDatasetRow, holdDatasetRow } from './dataset-queries.js';
import { abortDatasetUploads } from './multipart-uploads.js';
import { draftDois, withdrawDrafts } from './publication-doi.js';
import { announceVisibilityChanged } from './update-dataset.js';

/**
 * The `LISTEN/NOTIFY` channel on which a deletion is announced (PostgreSQL, at its commit), so that the workers,
 * each on its own disk, remove their mirrors of the dataset's source; a repeated deletion announces again.
 */
export const DATASET_DELETED_CHANNEL = 'nds_dataset_deleted';

export interface DeleteResult {
  id: string;
  /** Whether a dataset row existed (false on a repeated call). */
  deleted: boolean;
  objects_deleted: number;
}

export async function deleteDataset(deps: Pick<Deps, 'db' | 'objects' | 'hooks' | 'log' | 'config' | 'clock'>, actor: Actor, id: string): Promise<DeleteResult> {
  if (!DATASET_ID.test(id)) throw new NdsError('validation_failed', { details: ['id: nd or sb followed by 6 digits'] });
  // The drafts are read under the row lock an approval takes to commit, so none commits between the read and the
  // deletion; a draft an approval makes meanwhile, that approval deletes itself once it finds the dataset gone.
  const { removed, drafts } = await deps.db.transaction().execute(async (trx) => {
    await holdDatasetRow(trx, id, 'exclusive');
    const drafts = await draftDois(trx, deps.config, id);
    // Delivered when the deletion commits, never for one rolled back.
    await sql`select pg_notify(${DATASET_DELETED_CHANNEL}, ${id})`.execute(trx);
    return { removed: await deleteDatasetRow(trx, id), drafts };
  });
  // Never throws: a draft DataCite does not delete is logged and stays a draft, resolving nowhere.
  await withdrawDrafts(deps, id, drafts);
  // Objects go after the row, so the API stops naming the dataset first; a failure here is finished by a retry.
  const objectsDeleted = await deps.objects.deletePrefix(`${id}/`);
  await abortDatasetUploads(deps, id);
  await rm(repositoryDir(deps.config.gitDir, id), { recursive: true, force: true });
  await audit(deps.db, actor, 'dataset.delete', id, { existed: removed, objects_deleted: objectsDeleted });
  await announceVisibilityChanged(deps, id);
  return { id, deleted: removed, objects_deleted: objectsDeleted };
}
