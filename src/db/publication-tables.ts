import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Timestamp } from './accounts-tables.js';
import type { DatasetEmbeddingsTable } from './search-tables.js';

export type PublicationStatus = 'pending' | 'approved' | 'denied';

export interface PublicationRequestsTable {
  id: Generated<number>;
  dataset_id: string;
  /** The version the request publishes (the latest at request time). */
  version: string;
  status: PublicationStatus;
  requested_by: number | null;
  requested_at: Generated<Timestamp>;
  message: string | null;
  decided_by: number | null;
  decided_at: Timestamp | null;
  /** Why it was denied. */
  reason: string | null;
  /** The version DOI minted at approval. */
  doi: string | null;
}

export interface DoiRecordsTable {
  doi: string;
  dataset_id: string;
  kind: 'concept' | 'version';
  version: string | null;
  /** `datacite` or `test`. */
  provider: string;
  /** True for DOIs of the built-in test provider (prefix 10.5072, never resolvable). */
  test: boolean;
  url: string;
  metadata: ColumnType<Record<string, unknown>, string, string>;
  created_at: Generated<Timestamp>;
  updated_at: Generated<Timestamp>;
}

export interface PublicationTables {
  publication_requests: PublicationRequestsTable;
  doi_records: DoiRecordsTable;
  dataset_embeddings: DatasetEmbeddingsTable;
}

export type PublicationRequest = Selectable<PublicationRequestsTable>;
export type DoiRecord = Selectable<DoiRecordsTable>;
