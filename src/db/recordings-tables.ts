import type { ColumnType } from 'kysely';
import type { ChannelGroup, EventCounts } from '../client/index.js';
import type { Json, Timestamp } from './accounts-tables.js';

/** Arrays are written as Postgres arrays and read back as JS arrays (node-postgres parses them). */
type PgArray<T> = ColumnType<T[], T[], T[]>;

export interface RecordingsTable {
  dataset_id: string;
  zarr: string;
  path: string;
  source_commit: string | null;
  subject: string | null;
  session: string | null;
  task: string | null;
  run: string | null;
  acquisition: string | null;
  datatype: string | null;
  duration_s: number;
  n_channels: number;
  rates: PgArray<number>;
  channel_labels: PgArray<string>;
  channel_types: PgArray<string>;
  trial_types: PgArray<string>;
  /** Stored as `GET /recordings` answers them: the client's types are the API's. */
  groups: Json<ChannelGroup[]>;
  events: Json<EventCounts>;
  search_text: string;
  updated_at: Timestamp;
}

/**
 * A fence of the catalogue (decision 0023): a value some recording of the dataset holds for one filter.
 * Rebuilt with the dataset's rows by the SQL function `refresh_recording_fences`; exactly one of `value`
 * (subject, session, task, run, datatype, channel, channel_type, event_type) and `num` (rate; the least and
 * greatest n_channels and duration) is set.
 */
export interface RecordingFacetsTable {
  dataset_id: string;
  kind: string;
  value: string | null;
  num: number | null;
}

/** The distinct words of a dataset's recordings' search text, space-separated, under a trigram index. */
export interface RecordingWordsTable {
  dataset_id: string;
  words: string;
}

/**
 * The distinct terms of a dataset's recordings' search text, split at white space, `/`, `_`, `.` and `-`,
 * space-separated, under a trigram index: the word fence the catalogue reads (`recording_words` is kept for
 * the previous release only).
 */
export interface RecordingTermsTable {
  dataset_id: string;
  terms: string;
}

/**
 * The least and greatest rate, channel count and duration of a dataset's recordings: the range fence of
 * `rate_min`/`rate_max`, `channels_min`/`channels_max` and `duration_min`/`duration_max` (decision 0023).
 * The rates are null when no recording has one.
 */
export interface RecordingRangesTable {
  dataset_id: string;
  rate_least: number | null;
  rate_greatest: number | null;
  channels_least: number;
  channels_greatest: number;
  duration_least: number;
  duration_greatest: number;
}

/**
 * The commit whose `index.json` a dataset's catalogue was last read from whole: forgotten when a sync starts,
 * written with the rows when it ends, so a sync that failed leaves none and the catalogue is read whole again.
 */
export interface CatalogueSyncsTable {
  dataset_id: string;
  source_commit: string;
  synced_at: Timestamp;
}

export interface RecordingsTables {
  recordings: RecordingsTable;
  catalogue_syncs: CatalogueSyncsTable;
  recording_facets: RecordingFacetsTable;
  recording_words: RecordingWordsTable;
  recording_terms: RecordingTermsTable;
  recording_ranges: RecordingRangesTable;
}
