/**
 * The tools' inputs and answers as zod schemas (zod 4; the SDK turns them into the JSON Schemas of
 * `tools/list` and checks every call's arguments against them before a tool runs, answering a tool error
 * otherwise). One window selection is shared by `read_window`, `summarize_window` and `plot_window`.
 */
import { z } from 'zod';
import { recordingFilterFields } from '../routes/recording-schemas.js';

const datasetId = z.string().regex(/^(nd|sb)\d{6}$/).describe('A dataset id, e.g. nd000001 (search_datasets gives them)');
const path = z.string().min(1).max(1000).describe('The BIDS path of the recording\'s data file, as list_recordings or get_dataset give it');

export const SearchInput = {
  q: z.string().max(500).optional().describe('Words: a name, an author, a task, "500 Hz", "64 channels"... Empty: every dataset, newest first'),
  modality: z.string().trim().toLowerCase().max(40).optional().describe('eeg, emg, ieeg...'),
  task: z.string().trim().min(1).max(100).optional().describe('Only datasets with a recording of this BIDS task'),
  limit: z.number().int().min(1).max(100).default(10).describe('Most datasets answered (default 10)'),
};

export const GetDatasetInput = { dataset_id: datasetId };

export const ListRecordingsInput = {
  ...recordingFilterFields,
  limit: z.number().int().min(1).max(200).default(20).describe('Most recordings answered (default 20)'),
  cursor: z.string().max(1000).optional().describe('next_cursor of the previous answer, for the next page'),
};

export const EventsInput = {
  dataset_id: datasetId,
  path,
  trial_type: z.string().max(200).optional().describe('Only events of this trial_type'),
  start_s: z.number().min(0).max(1e9).optional().describe('Only events that end at or after this time, seconds from the first sample'),
  end_s: z.number().min(0).max(1e9).optional().describe('Only events that start before this time'),
  group: z.string().max(100).optional().describe('The channel group whose rate `sample` counts in (the first when left out)'),
  limit: z.number().int().min(1).max(10_000).default(1000).describe('Most events answered (default 1000); `truncated` says when there were more'),
};

/** Which samples of which channels: the window of `GET /datasets/:id/signal`, with the same rules. */
export const WindowSelection = {
  dataset_id: datasetId,
  path,
  start_s: z.number().min(0).max(1e9).optional().describe('Window start, seconds from the first sample (or give start_sample)'),
  duration_s: z.number().positive().max(1e9).optional().describe('Window length in seconds (or give n_samples); default: to the end'),
  start_sample: z.number().int().min(0).max(2 ** 48).optional().describe('Window start in samples of the group'),
  n_samples: z.number().int().positive().max(2 ** 48).optional().describe('Window length in samples of the group'),
  channels: z.array(z.string().min(1).max(200)).min(1).max(4096).optional().describe('Channel labels, in the order wanted (or give channel_type); default: every channel'),
  channel_type: z.string().trim().toUpperCase().max(20).optional().describe('Every channel of this type: EEG, EMG, EOG, ECG...'),
  group: z.string().max(100).optional().describe('The channel group (e.g. eeg_500hz) when the recording has several rates'),
};

export const ReadWindowInput = {
  ...WindowSelection,
  rate: z.number().positive().max(1_000_000).optional().describe('Resample to this rate in Hz (polyphase, anti-aliased)'),
  format: z.enum(['json', 'npy']).default('json').describe('json: the values as numbers (at most 100,000); npy: a NumPy file as an embedded resource (larger windows)'),
};

export const SummarizeInput = { ...WindowSelection };

export const PlotInput = {
  ...WindowSelection,
  duration_s: z.number().positive().max(60).optional().describe('The span drawn, seconds (at most 60; default 10)'),
  hp: z.number().positive().max(10_000).optional().describe('High-pass corner, Hz'),
  lp: z.number().positive().max(10_000).optional().describe('Low-pass corner, Hz'),
  notch: z.union([z.literal(50), z.literal(60)]).optional().describe('Remove this line frequency and its harmonics'),
  ref: z.string().max(2000).optional().describe('Reference: avg (common average), a channel label, A1+A2 (their mean), or bipolar:Fp1-F7,F7-T7,...'),
  scale: z.string().max(500).optional().describe('Sensitivity per channel type in µV per division, e.g. eeg:50,eog:100, or auto; default: the viewer\'s (EEG 100 µV, EMG 500 µV...)'),
  width: z.number().int().min(320).max(1600).default(1200).describe('Image width in pixels (at most 1600)'),
  height: z.number().int().min(200).max(1600).default(560).describe('Image height in pixels'),
};

type Args<T extends z.ZodRawShape> = z.output<z.ZodObject<T>>;
export type SearchArgs = Args<typeof SearchInput>;
export type GetDatasetArgs = Args<typeof GetDatasetInput>;
export type ListRecordingsArgs = Args<typeof ListRecordingsInput>;
export type EventsArgs = Args<typeof EventsInput>;
export type ReadWindowArgs = Args<typeof ReadWindowInput>;
export type SummarizeArgs = Args<typeof SummarizeInput>;
export type PlotArgs = Args<typeof PlotInput>;
