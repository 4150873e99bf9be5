/** The dataset's `index.json` (CONTRACT §4): every store with its groups, and every failure with its code. */
import type { FailureCode } from '../conversion-errors.js';
import type { StoreSummary } from './store-layout.js';
import { converterVersion } from './store-layout.js';

export interface IndexStore {
  path: string;
  zarr: string;
  updated_utc: string;
  summary: StoreSummary;
}

export interface IndexFailure {
  path: string;
  zarr: string;
  code: FailureCode;
  reason: string;
}

export interface StoreIndexInit {
  datasetId: string | null;
  contractBase: string | null;
  dataBase: string | null;
  sourceCommit: string | null;
  stores: IndexStore[];
  failures: IndexFailure[];
  now?: Date;
}

export function buildStoreIndex(init: StoreIndexInit): Record<string, unknown> {
  return {
    format: 'nds-zarr-index',
    format_version: 1,
    dataset_id: init.datasetId,
    contract_base: init.contractBase,
    data_base: init.dataBase,
    source_commit: init.sourceCommit,
    engine_version: converterVersion,
    updated_utc: (init.now ?? new Date()).toISOString(),
    discovered_count: init.stores.length + init.failures.length,
    store_count: init.stores.length,
    failure_count: init.failures.length,
    stores: init.stores.map((s) => ({
      path: s.path,
      zarr: s.zarr,
      updated_utc: s.updated_utc,
      modalities: s.summary.modalities,
      groups: s.summary.groups,
      n_events: s.summary.n_events,
      trial_types: s.summary.trial_types,
    })),
    failures: init.failures,
  };
}
