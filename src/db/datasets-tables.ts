import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json, Timestamp } from './accounts-tables.js';

export type Visibility = 'public' | 'private';
export type ZarrStatus = 'pending' | 'converting' | 'ready' | 'failed';

export interface DatasetsTable {
  /** `nd` + 6 digits, or `sb` + 6 digits for sandbox datasets. */
  id: string;
  name: string;
  description: Generated<string>;
  owner_id: number;
  visibility: Visibility;
  sandbox: Generated<boolean>;
  source_repo: string | null;
  external_ids: ColumnType<string[], string[] | undefined, string[]>;
  license: string | null;
  authors: ColumnType<string[], string[] | undefined, string[]>;
  keywords: ColumnType<string[], string[] | undefined, string[]>;
  modalities: ColumnType<string[], string[] | undefined, string[]>;
  tasks: ColumnType<string[], string[] | undefined, string[]>;
  n_subjects: number | null;
  size_bytes: Generated<number>;
  /** Free-form metadata (recording facts for search, BIDS dataset_description...). */
  metadata: Generated<Json<Record<string, unknown>>>;
  latest_version: string | null;
  doi: string | null;
  concept_doi: string | null;
  publication_status: string | null;
  zarr_status: ZarrStatus | null;
  zarr_converted_at: Timestamp | null;
  zarr_store_count: number | null;
  zarr_index_etag: string | null;
  zarr_source_commit: string | null;
  /** Why the last conversion failed as a whole (`zarr_status` `failed`), for the owner; null otherwise. */
  zarr_error: string | null;
  /** Native sampling rates of the recordings (from the Zarr copy's index.json), for search. */
  sampling_rates: ColumnType<number[], number[] | undefined, number[]>;
  /** Channel counts of the recordings' channel groups, for search. */
  channel_counts: ColumnType<number[], number[] | undefined, number[]>;
  /** Kept by the trigger datasets_search_vector; never written by the application. */
  search_vector: ColumnType<string | null, never, never>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

/** One immutable snapshot of a dataset; its manifest is at `<id>/versions/<version>/manifest.json`. */
export interface DatasetVersionsTable {
  dataset_id: string;
  /** Semver; (dataset_id, version) is the primary key, so a number is never used twice. */
  version: string;
  created_at: Generated<Timestamp>;
  created_by: number | null;
  source_commit: string | null;
  /** hex SHA-256 of the manifest object's bytes. */
  manifest_sha256: string;
  file_count: number;
  size_bytes: ColumnType<number, number, number>;
}

/** What a Zarr index tells about the recordings (datasets/search-fields.ts), stored under `metadata.recording`. */
export interface RecordingFacts {
  n_recordings: number;
  modalities: string[];
  tasks: string[];
  sampling_rates: number[];
  channel_counts: number[];
  trial_types: string[];
  n_subjects: number;
  source_commit: string | null;
  /** Recordings that could not be converted (absent in facts written before it was counted). */
  failure_count?: number;
  /** Seconds of signal over all converted recordings (absent in facts written before it was summed). */
  duration_s?: number;
}

/** A role a dataset's member holds (decision 0028): each includes the ones before it. */
export type MemberRole = 'reader' | 'annotator' | 'maintainer';

/** A person a dataset is shared with (`datasets/dataset-members-queries.ts` owns the table). */
export interface DatasetMembersTable {
  dataset_id: string;
  user_id: number;
  role: MemberRole;
  /** Who added them, or last changed their role; null once that account is gone. */
  added_by: number | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The node whose disk holds a dataset's hosted git repository (decision 0026). */
export interface RepositoryHoldersTable {
  dataset_id: string;
  /** That node's NODE_URL, where the others forward the repository's git requests. */
  node_url: string;
  created_at: Timestamp;
}

/**
 * Room granted to a dataset for one object key, counted against its owner's storage quota (decision 0051;
 * `datasets/storage-quota.ts` owns the table).
 */
export interface StorageGrantsTable {
  dataset_id: string;
  /** `objects/<sha256>`, `uploads/<upload id>`, `git` (the hosted repository), or `versions` (before the ledger). */
  object_key: string;
  bytes: number;
  /** The bytes are known to be stored (not only granted). */
  confirmed: Generated<boolean>;
  /** When an unconfirmed grant's URL or upload ends; the sweep then looks in the store. */
  expires_at: Timestamp;
  created_at: Generated<Timestamp>;
}

/** The sum of a dataset's `storage_grants`, kept by their trigger (never written by the application). */
export interface DatasetStorageTable {
  dataset_id: string;
  bytes: ColumnType<number, never, never>;
}

export interface DatasetsTables {
  datasets: DatasetsTable;
  storage_grants: StorageGrantsTable;
  dataset_storage: DatasetStorageTable;
  dataset_versions: DatasetVersionsTable;
  dataset_members: DatasetMembersTable;
  repository_holders: RepositoryHoldersTable;
}

export type DatasetRow = Selectable<DatasetsTable>;
export type DatasetVersionRow = Selectable<DatasetVersionsTable>;
export type DatasetMemberRow = Selectable<DatasetMembersTable>;
