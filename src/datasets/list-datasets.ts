/**
 * Paged dataset lists, newest id first. The cursor is opaque to clients: base64url of the last id
 * served, so pages stay stable while datasets are added (new ids sort before it).
 */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { NdsError } from '../core/errors.js';
import { DATASET_ID, datasetsWithOwner, type Dataset } from './dataset-access.js';

export interface ListOptions {
  limit: number;
  cursor?: string;
  /** `visible`: public ones plus the viewer's own; `owned`: only the viewer's own, private or not. */
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

export async function listDatasets(db: Kysely<Database>, viewer: User | undefined, options: ListOptions): Promise<{ datasets: Dataset[]; nextCursor: string | null }> {
  let q = datasetsWithOwner(db);
  if (options.scope === 'owned') {
    q = q.where('datasets.owner_id', '=', viewer?.id ?? -1);
  } else {
    q = q.where((eb) => (viewer ? eb.or([eb('datasets.visibility', '=', 'public'), eb('datasets.owner_id', '=', viewer.id)]) : eb('datasets.visibility', '=', 'public')));
  }
  if (options.cursor) q = q.where('datasets.id', '<', decodeCursor(options.cursor));
  // One extra row tells whether another page exists without a count.
  const rows = await q.orderBy('datasets.id', 'desc').limit(options.limit + 1).execute();
  const page = rows.slice(0, options.limit);
  return { datasets: page, nextCursor: rows.length > options.limit ? encodeCursor(page[page.length - 1].id) : null };
}

/**
 * A dataset by an outside name: an external id (`openneuro:ds004504`), a repository `owner/name`
 * (matched against the end of `source_repo`, with or without `.git`), or its own id. Only datasets the
 * viewer may see are found.
 */
export async function resolveDataset(db: Kysely<Database>, sourceId: string, canSee: (d: Dataset) => boolean): Promise<Dataset | undefined> {
  let candidates: Dataset[];
  if (DATASET_ID.test(sourceId)) {
    candidates = await datasetsWithOwner(db).where('datasets.id', '=', sourceId).execute();
  } else if (/^[^/:\s]+\/[^/\s]+$/.test(sourceId)) {
    const repo = sourceId.replace(/\.git$/, '');
    candidates = await datasetsWithOwner(db)
      .where((eb) => eb.or([eb('datasets.source_repo', 'like', `%/${escapeLike(repo)}`), eb('datasets.source_repo', 'like', `%/${escapeLike(repo)}.git`), eb('datasets.source_repo', 'like', `%:${escapeLike(repo)}.git`)]))
      .orderBy('datasets.id')
      .execute();
  } else {
    candidates = await datasetsWithOwner(db)
      .where((eb) => eb(eb.val(sourceId), '=', eb.fn.any('datasets.external_ids')))
      .orderBy('datasets.id')
      .execute();
  }
  return candidates.find(canSee);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
