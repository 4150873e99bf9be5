/** The editable descriptive fields of a dataset, shared by creation and PATCH. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
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

/** An external id names one dataset, so `resolve` has one answer: a second claim answers 409. */
export async function assertExternalIdsFree(db: Kysely<Database>, ids: string[], exceptId: string | undefined): Promise<void> {
  for (const externalId of ids) {
    const other = await datasetClaimingExternalId(db, externalId, exceptId);
    if (other) throw new NdsError('conflict', { message: `The external id ${externalId} already names dataset ${other}.` });
  }
}
