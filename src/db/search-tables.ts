import type { Timestamp } from './accounts-tables.js';

/** One embedding a dataset, for semantic search; `text_sha256` tells when the dataset's text changed. */
export interface DatasetEmbeddingsTable {
  dataset_id: string;
  model: string;
  text_sha256: string;
  /** real[]; ranked by pgvector when the extension exists, else by the SQL function nds_cosine. */
  embedding: number[];
  updated_at: Timestamp;
  /** Set by a trigger when the dataset's text changes; the background job embeds it again (decision 0023). */
  stale: boolean;
}
