/**
 * Paged dataset lists, newest id first. The cursor is opaque to clients: base64url of the last id
 * served, so pages stay stable while datasets are added (new ids sort before it).
 */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { allows, canSee, DATASET_ID, findDatasetAndStanding } from './dataset-access.js';
import { findDatasetsByExternalId, findDatasetsBySourceRepo, listDatasetRows, type Dataset } from './dataset-queries.js';

export interface ListOptions {
  limit: number;
  cursor?: string;
  /** `visible`: public ones plus the user's own; `owned`: only the user's own, private or not. */
  scope: 'visible' | 'owned';
}

export function encodeCursor(lastId: string): string {
  return Buffer.from(JSON.stringify({ after: lastId })).toString('base64url');
}

function decodeCursor(cursor: string): string {
  try {
    const { after } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof after === 'string' && DATASET_ID.test(after)) return after;
  } catch {
    // fall through
  }
  throw new NdsError('validation_failed', { details: ['cursor: not a cursor this server gave out'] });
}

export async function listDatasets(db: Kysely<Database>, user: User | undefined, options: ListOptions): Promise<{ datasets: Dataset[]; nextCursor: string | null }> {
  const beforeId = options.cursor ? decodeCursor(options.cursor) : undefined;
  // One extra row tells whether another page exists without a count.
  const rows = await listDatasetRows(db, { scope: options.scope, userId: user?.id, ...(beforeId && { beforeId }), limit: options.limit + 1 });
  const page = rows.slice(0, options.limit);
  return { datasets: page, nextCursor: rows.length > options.limit ? encodeCursor(page[page.length - 1].id) : null };
}

/**
 * A dataset by an outside name: an external id (`openneuro:ds004504`), a repository `owner/name`
 * (matched against the end of `source_repo`, with or without `.git`), or its own id. Only datasets the
 * user may see are found.
 */
export async function resolveDataset(db: Kysely<Database>, sourceId: string, user: User | undefined): Promise<Dataset | undefined> {
  if (DATASET_ID.test(sourceId)) {
    // Found with the caller's standing in one statement: a private id costs what an unknown one does.
    const { dataset, standing } = await findDatasetAndStanding(db, sourceId, user);
    return dataset && allows(standing, 'read') ? dataset : undefined;
  }
  const candidates = /^[^/:\s]+\/[^/\s]+$/.test(sourceId) ? await findDatasetsBySourceRepo(db, sourceId.replace(/\.git$/, '')) : await findDatasetsByExternalId(db, sourceId);
  for (const candidate of candidates) if (await canSee(db, user, candidate)) return candidate;
  return undefined;
}
