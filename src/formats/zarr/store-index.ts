/**
 * The dataset's `index.json` (docs/conversion.md): every store with its groups, and every failure with its code.
 * `StoreIndex` is its one shape; the conversion writes it, search, the pages and the next conversion read it.
 */
import { systemClock } from '../../core/clock.js';
import type { FailureCode } from '../conversion-errors.js';
import type { GroupSummary, StoreSummary } from './store-layout.js';
import { converterVersion } from './store-layout.js';

/** A converted store as the builder takes it: where it is, when it was written, and its summary. */
export interface IndexStore {
  path: string;
  zarr: string;
  updated_utc: string;
  summary: StoreSummary;
}

/** One store as `index.json` lists it (the summary's fields a reader needs, without duration and flags). */
export interface StoreIndexEntry {
  /** The recording's data file in the BIDS tree. */
  path: string;
  /** The store's folder under `<id>/zarr/`. */
  zarr: string;
  updated_utc: string;
  modalities: string[];
  groups: GroupSummary[];
  n_events: number;
  trial_types: string[];
}

/**
 * Whose fault a failure is: `file` (the converter refused the file: later conversions keep the failure until
 * the file changes) or `service` (given up for faults of the service, such as object store errors or workers
 * lost: the next conversion tries the recording again).
 */
export type FailureKind = 'file' | 'service';

export interface IndexFailure {
  path: string;
  zarr: string;
  code: FailureCode;
  reason: string;
  /** Absent from indexes written before it was kept, and from external runners': read as `file`. */
  kind?: FailureKind;
}

export interface StoreIndex {
  format: 'nds-zarr-index';
  format_version: 1;
  dataset_id: string | null;
  /** Where clients read the copy through the gateway; null for a local conversion. */
  contract_base: string | null;
  /** Where the copy's objects are public without the gateway; null when they are not. */
  data_base: string | null;
  /** The source commit converted; null for a local conversion. A later conversion diffs from it. */
  source_commit: string | null;
  engine_version: string;
  updated_utc: string;
  discovered_count: number;
  store_count: number;
  failure_count: number;
  stores: StoreIndexEntry[];
  failures: IndexFailure[];
}

export interface StoreIndexInit {
  datasetId: string | null;
  contractBase: string | null;
  dataBase: string | null;
  sourceCommit: string | null;
  /** Stores just converted (with their summary), or entries kept from a previous index. */
  stores: Array<IndexStore | StoreIndexEntry>;
  failures: IndexFailure[];
  /** The index's `updated_utc`; the current time when left out. */
  now?: Date;
}

export function buildStoreIndex(init: StoreIndexInit): StoreIndex {
  return {
    format: 'nds-zarr-index',
    format_version: 1,
    dataset_id: init.datasetId,
    contract_base: init.contractBase,
    data_base: init.dataBase,
    source_commit: init.sourceCommit,
    engine_version: converterVersion,
    updated_utc: (init.now ?? systemClock.now()).toISOString(),
    discovered_count: init.stores.length + init.failures.length,
    store_count: init.stores.length,
    failure_count: init.failures.length,
    stores: init.stores.map(indexEntryOf),
    failures: init.failures,
  };
}

/** The entry of a store in the index; an entry kept from an earlier index keeps its fields and no others. */
export function indexEntryOf(store: IndexStore | StoreIndexEntry): StoreIndexEntry {
  const facts = 'summary' in store ? store.summary : store;
  return { path: store.path, zarr: store.zarr, updated_utc: store.updated_utc, modalities: facts.modalities, groups: facts.groups, n_events: facts.n_events, trial_types: facts.trial_types };
}

/** The bytes of `index.json` as written: indented for people who open it, with a final newline. */
export function serializeStoreIndex(index: StoreIndex): string {
  return `${JSON.stringify(index, null, 2)}\n`;
}

/**
 * Reads `index.json` text. An index may come from an external runner, so only its outline is checked:
 * `stores` and `failures` are arrays (empty when absent); entries are taken as written. Throws a
 * `SyntaxError` when the text is not JSON or not an object.
 */
export function parseStoreIndex(text: string | Uint8Array): StoreIndex {
  const parsed = JSON.parse(typeof text === 'string' ? text : Buffer.from(text).toString('utf8')) as unknown;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new SyntaxError('index.json is not a JSON object');
  const index = parsed as Partial<StoreIndex>;
  return { ...(index as StoreIndex), stores: Array.isArray(index.stores) ? index.stores : [], failures: Array.isArray(index.failures) ? index.failures : [] };
}
