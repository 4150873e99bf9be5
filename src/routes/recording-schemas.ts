/** Schemas of the recording catalogue, signal windows, events and window lists (`GET /recordings`, ...). */
import { z } from '@hono/zod-openapi';
import type { Recording } from '../client/index.js';

const label = z.string().trim().min(1).max(200);
const entity = z.string().trim().min(1).max(100);
const rate = z.coerce.number().positive().max(1_000_000);
const count = z.coerce.number().int().min(0).max(1_000_000);
const seconds = z.coerce.number().min(0).max(1e9);

/** The filters of `GET /recordings`, shared with the body of `POST /windows`. */
export const recordingFilterFields = {
  dataset: z.string().regex(/^(nd|sb)\d{6}$/).optional().openapi({ description: 'Only this dataset' }),
  subject: entity.optional().openapi({ description: 'BIDS subject label, without `sub-`' }),
  session: entity.optional(),
  task: entity.optional(),
  run: entity.optional(),
  datatype: z.string().trim().toLowerCase().max(20).optional().openapi({ description: 'eeg, emg, ieeg...' }),
  rate: rate.optional().openapi({ description: 'A group at exactly this rate, in Hz' }),
  rate_min: rate.optional(),
  rate_max: rate.optional(),
  channels_min: count.optional(),
  channels_max: count.optional(),
  duration_min: seconds.optional().openapi({ description: 'Seconds' }),
  duration_max: seconds.optional(),
  channel: z
    .union([label, z.array(label).max(256)])
    .optional()
    .transform((v) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]))
    .openapi({ description: 'A channel label the recording must have; repeat for several' }),
  channel_type: z.string().trim().toUpperCase().max(20).optional().openapi({ description: 'EEG, EMG, SEEG, ECOG, EOG...' }),
  event_type: label.optional().openapi({ description: 'A `trial_type` that must occur' }),
  q: z.string().trim().max(500).optional().openapi({ description: 'Words found in the path, task, channel labels or event types' }),
};

export const RecordingFiltersSchema = z.object(recordingFilterFields);

export const CatalogueQuery = z.object({
  ...recordingFilterFields,
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(1000).optional(),
});

const Channel = z.object({ label: z.string(), type: z.string(), unit: z.string(), status: z.string() });
const Group = z.object({
  name: z.string(),
  modality: z.string(),
  rate: z.number(),
  n_channels: z.number().int(),
  n_samples: z.number().int(),
  duration_s: z.number(),
  channels: z.array(Channel),
});

export const RecordingSchema = z
  .object({
    dataset_id: z.string(),
    path: z.string().openapi({ description: 'The BIDS path of the data file' }),
    zarr: z.string().openapi({ description: "The store's folder in the copy (under `<id>/zarr/`)" }),
    store_url: z.string().openapi({ description: 'The store through the gateway, for any Zarr v3 reader' }),
    source_commit: z.string().nullable(),
    entities: z.object({
      subject: z.string().nullable(),
      session: z.string().nullable(),
      task: z.string().nullable(),
      run: z.string().nullable(),
      acquisition: z.string().nullable(),
      datatype: z.string().nullable(),
    }),
    groups: z.array(Group),
    events: z.object({ n_events: z.number().int(), counts: z.record(z.string(), z.number().int()) }),
  })
  .openapi('Recording');

/** True when `A` and `B` accept the same values. */
export type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** The documented answer is the client's `Recording`, field for field: the type check fails when one drifts. */
const documentsTheClientsRecording: Exactly<z.output<typeof RecordingSchema>, Recording> = true;
void documentsTheClientsRecording;

export const RecordingPage = z.object({ recordings: z.array(RecordingSchema), next_cursor: z.string().nullable() }).openapi('RecordingPage');

export const DatasetRecordings = z
  .object({
    recordings: z.array(RecordingSchema),
    failures: z.array(z.object({ path: z.string(), zarr: z.string(), code: z.string(), reason: z.string() })),
  })
  .openapi('DatasetRecordings');
