/**
 * Keeps a dataset's search fields true to its Zarr copy: `modalities`, `tasks`, `sampling_rates`,
 * `channel_counts`, `metadata.recording` (and `n_subjects` when nobody set it) are derived from
 * `<id>/zarr/index.json` (docs/conversion.md), its failures included for what their paths say. Called after each
 * successful conversion; the trigger `datasets_search_vector` then re-indexes the row.
 */
import type { RecordingFacts } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import type { IndexFailure, StoreIndex, StoreIndexEntry } from '../formats/zarr/store-index.js';
import type { GroupSummary } from '../formats/zarr/store-layout.js';
import { readStoreIndex } from '../formats/zarr/store-index-object.js';
import { setRecordingFacts } from './dataset-queries.js';

/** A field of `StoreIndex` as read from outside: named as in the type, of any value. */
type Loose<T> = { [K in keyof T]?: unknown };

/** BIDS datatype folders of the recordings nds serves. */
const DATATYPE = /(?:^|\/)(eeg|emg|ieeg)\//;

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x.length > 0) : []);
const sortedNumbers = (s: Set<number>) => [...s].sort((a, b) => a - b);

/**
 * Pure: the facts of an index (`StoreIndex`, or any parsed JSON); tolerant of missing or odd fields, since an
 * index may come from an external runner.
 */
export function recordingFacts(index: unknown): RecordingFacts {
  const root = (index ?? {}) as Loose<StoreIndex>;
  const stores = Array.isArray(root.stores) ? (root.stores as Loose<StoreIndexEntry>[]) : [];
  const failures = Array.isArray(root.failures) ? (root.failures as Loose<IndexFailure>[]) : [];
  const modalities = new Set<string>();
  const tasks = new Set<string>();
  const subjects = new Set<string>();
  const trialTypes = new Set<string>();
  const rates = new Set<number>();
  const channels = new Set<number>();
  let durationS = 0;
  // BIDS entities in the file name: sub-<label>, task-<label>.
  const entitiesOf = (where: string) => {
    const task = /(?:^|[/_])task-([A-Za-z0-9]+)/.exec(where);
    if (task) tasks.add(task[1]);
    const sub = /(?:^|[/_])sub-([A-Za-z0-9]+)/.exec(where);
    if (sub) subjects.add(sub[1]);
  };
  // A recording that could not be converted (a placeholder data file, say) still names its subject, task
  // and datatype; rates and channel counts come only from converted ones.
  let failureCount = 0;
  for (const failure of failures) {
    if (typeof failure.path !== 'string') continue;
    failureCount++;
    entitiesOf(failure.path);
    const datatype = DATATYPE.exec(failure.path);
    if (datatype) modalities.add(datatype[1]);
  }
  for (const store of stores) {
    entitiesOf(typeof store.path === 'string' ? store.path : typeof store.zarr === 'string' ? store.zarr : '');
    for (const m of strings(store.modalities)) modalities.add(m.toLowerCase());
    for (const t of strings(store.trial_types)) trialTypes.add(t);
    // A recording lasts as long as its longest channel group (groups of one recording run side by side).
    let longest = 0;
    for (const g of (store.groups ?? []) as Loose<GroupSummary>[]) {
      if (typeof g.duration_s === 'number' && Number.isFinite(g.duration_s) && g.duration_s > longest) longest = g.duration_s;
      if (typeof g.modality === 'string') modalities.add(g.modality.toLowerCase());
      if (typeof g.rate === 'number' && Number.isFinite(g.rate) && g.rate > 0) rates.add(g.rate);
      if (typeof g.n_channels === 'number' && Number.isInteger(g.n_channels) && g.n_channels > 0) channels.add(g.n_channels);
    }
    durationS += longest;
  }
  return {
    n_recordings: stores.length,
    modalities: [...modalities].sort(),
    tasks: [...tasks].sort(),
    sampling_rates: sortedNumbers(rates),
    channel_counts: sortedNumbers(channels),
    trial_types: [...trialTypes].sort(),
    n_subjects: subjects.size,
    source_commit: typeof root.source_commit === 'string' ? root.source_commit : null,
    failure_count: failureCount,
    duration_s: durationS,
  };
}

/**
 * Re-derives the search fields of `datasetId` from its index.json. Returns the facts, or `undefined` when
 * the dataset has no index (nothing is changed then). Throws when the index is not JSON.
 */
export async function refreshSearchFields(deps: Pick<Deps, 'db' | 'objects'>, datasetId: string): Promise<RecordingFacts | undefined> {
  const index = await readStoreIndex(deps.objects, datasetId);
  if (index === undefined) return undefined;
  const facts = recordingFacts(index);
  await setRecordingFacts(deps.db, datasetId, facts);
  return facts;
}

/** The hook for `deps.hooks.zarrChanged`: a failure is logged and never fails the conversion's callback. */
export function searchFieldsRefresher(deps: Pick<Deps, 'db' | 'objects' | 'log'>) {
  return async function refreshSearchFieldsHook(datasetId: string): Promise<void> {
    try {
      await refreshSearchFields(deps, datasetId);
    } catch (err) {
      deps.log.warn({ err, dataset: datasetId }, 'search fields refresh failed');
    }
  };
}
