/** The editable descriptive fields of a dataset, shared by creation and PATCH. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import type { User } from '../db/accounts-tables.js';
import { canSee } from './dataset-access.js';
import { datasetClaimingExternalId } from './dataset-queries.js';

export interface DatasetFields {
  name?: string;
  description?: string;
  keywords?: string[];
  license?: string | null;
  authors?: string[];
  source_repo?: string | null;
  external_ids?: string[];
}

/**
 * An external id names one dataset, so `resolve` has one answer: a second claim answers 409. The conflict
 * names the dataset only to someone who may see it; to anyone else the id is just taken, so a private
 * dataset's id cannot be learned by probing external ids.
 */
export async function assertExternalIdsFree(db: Kysely<Database>, ids: string[], exceptId: string | undefined, user: User): Promise<void> {
  for (const externalId of ids) {
    const other = await datasetClaimingExternalId(db, externalId, exceptId);
    if (!other) continue;
    throw new NdsError('conflict', {
      message: (await canSee(db, user, other)) ? `The external id ${externalId} already names dataset ${other.id}.` : `The external id ${externalId} is taken by another dataset.`,
    });
  }
}
