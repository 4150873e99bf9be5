/**
 * The recording catalogue as clients see it: pages of recordings the caller may read, across datasets or in
 * one, each with its entities, groups, channels and event counts, and where to stream its store.
 */
import type { Deps } from '../deps.js';
import type { User } from '../db/accounts-tables.js';
import type { Recording } from '../client/index.js';
import { NdsError } from '../core/errors.js';
import { DATASET_ID, visibleDataset } from '../datasets/dataset-access.js';
import { findRecordingRow, listRecordingRows, type CatalogueCursor, type RecordingFilters, type RecordingPageRow } from './catalogue-queries.js';
import { readConversionFailures, type ConversionFailure } from '../formats/zarr/conversion-failures.js';

export const MAX_PAGE = 1000;

export function presentRecording(row: RecordingPageRow, config: Deps['config']): Recording {
  return {
    dataset_id: row.dataset_id,
    path: row.path,
    zarr: row.zarr,
    store_url: `${config.zarrCacheBaseUrl}/${row.dataset_id}/zarr/${row.zarr}`,
    source_commit: row.source_commit,
    entities: { subject: row.subject, session: row.session, task: row.task, run: row.run, acquisition: row.acquisition, datatype: row.datatype },
    groups: row.groups,
    events: row.events,
  };
}

export function encodeCursor(cursor: CatalogueCursor): string {
  return Buffer.from(JSON.stringify([cursor.dataset_id, cursor.zarr])).toString('base64url');
}

export function decodeCursor(text: string): CatalogueCursor {
  try {
    const [dataset_id, zarr] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    // Only the shapes this server hands out: a forged cursor's text goes into SQL, where a NUL is a 500.
    if (typeof dataset_id === 'string' && DATASET_ID.test(dataset_id) && typeof zarr === 'string' && zarr.length > 0 && zarr.length <= 1024 && !/[\u0000-\u001f]/.test(zarr)) return { dataset_id, zarr };
  } catch {
    // answered below
  }
  throw new NdsError('validation_failed', { message: 'The cursor is not one this server gave.', details: ['cursor: pass next_cursor from the previous page as it is'] });
}

/** One page of the recordings `user` may read that match `filters`; `next_cursor` is null on the last page. */
export async function listRecordings(
  deps: Pick<Deps, 'db' | 'config'>,
  user: User | undefined,
  filters: RecordingFilters,
  page: { limit: number; cursor?: string },
): Promise<{ recordings: Recording[]; next_cursor: string | null }> {
  const after = page.cursor ? decodeCursor(page.cursor) : undefined;
  const rows = await listRecordingRows(deps.db, user, filters, { limit: page.limit + 1, ...(after ? { after } : {}) });
  const shown = rows.slice(0, page.limit);
  const last = shown.at(-1);
  return {
    recordings: shown.map((r) => presentRecording(r, deps.config)),
    next_cursor: rows.length > page.limit && last ? encodeCursor({ dataset_id: last.dataset_id, zarr: last.zarr }) : null,
  };
}

/** Every recording of one dataset the caller may read (404 otherwise), with the recordings that failed to convert. */
export async function datasetRecordings(deps: Pick<Deps, 'db' | 'config' | 'objects'>, user: User | undefined, datasetId: string): Promise<{ recordings: Recording[]; failures: ConversionFailure[] }> {
  await visibleDataset(deps.db, datasetId, user);
  const recordings: Recording[] = [];
  let cursor: string | undefined;
  do {
    const page = await listRecordings(deps, user, { dataset: datasetId }, { limit: MAX_PAGE, ...(cursor ? { cursor } : {}) });
    recordings.push(...page.recordings);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return { recordings, failures: (await readConversionFailures(deps, datasetId)) ?? [] };
}

/** One recording of a dataset the caller may read, by its data file's path (or store folder); 404 otherwise. */
export async function recordingAt(deps: Pick<Deps, 'db' | 'config'>, user: User | undefined, datasetId: string, path: string): Promise<Recording> {
  await visibleDataset(deps.db, datasetId, user);
  const row = await findRecordingRow(deps.db, datasetId, path);
  if (!row) throw new NdsError('not_found', { message: `No converted recording at ${path} in ${datasetId}.` });
  return presentRecording(row, deps.config);
}
