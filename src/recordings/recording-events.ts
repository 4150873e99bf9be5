/** `GET /datasets/:id/events`: one recording's events with every `_events.tsv` column, as JSON rows or CSV. */
import type { User } from '../db/accounts-tables.js';
import { NdsError } from '../core/errors.js';
import { visibleDataset } from '../datasets/dataset-access.js';
import { findRecordingRow } from './catalogue-queries.js';
import { readStoreEvents, type StoreEvent } from './store-events.js';
import type { RecordingReadDeps } from './recording-caches.js';

export async function recordingEvents(deps: RecordingReadDeps, user: User | undefined, datasetId: string, path: string, group?: string): Promise<{ group: string | null; events: StoreEvent[] }> {
  await visibleDataset(deps.db, datasetId, user);
  const row = await findRecordingRow(deps.db, datasetId, path);
  const store = row && (await deps.recordingCaches.storeMetadata.read(datasetId, row.zarr));
  if (!row || !store) throw new NdsError('not_found', { message: `No converted recording at ${path} in ${datasetId}.` });
  if (group && !store.groups.some((g) => g.name === group)) {
    throw new NdsError('validation_failed', { message: `No group ${group} in this recording.`, details: [`group: one of ${store.groups.map((g) => g.name).join(', ')}`] });
  }
  const chosen = group ?? store.groups[0]?.name;
  return { group: chosen ?? null, events: await readStoreEvents(deps.objects, store, chosen) };
}

const FIRST_COLUMNS = ['onset', 'duration', 'sample', 'trial_type', 'value'];

function csvCell(value: unknown): string {
  if (value === null || value === undefined) return 'n/a';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Events as CSV: onset, duration, sample, trial_type, value, then the other columns in their first order. */
export function eventsCsv(events: StoreEvent[]): string {
  const columns = [...FIRST_COLUMNS];
  for (const event of events) for (const key of Object.keys(event)) if (!columns.includes(key)) columns.push(key);
  const lines = [columns.join(',')];
  for (const event of events) lines.push(columns.map((c) => csvCell(event[c])).join(','));
  return `${lines.join('\n')}\n`;
}
