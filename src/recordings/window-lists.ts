/**
 * Window lists for training: fixed-length or event-locked windows over the recordings a filter selects,
 * optionally split into train/valid/test by subject, session or recording. It reads the catalogue and the
 * events, never the signal. The same body over the same source commits gives the same `hash` and windows:
 * recordings come in (dataset, store) order, and splits are decided by a seeded SHA-256 of each unit.
 * A list that misses what was asked says so in `warnings` (`window-list-warnings.ts`): no recording, no event
 * of the mapping (with the event types the recordings do have), a split left empty.
 */
import { createHash } from 'node:crypto';
import type { User } from '../db/accounts-tables.js';
import { NdsError } from '../core/errors.js';
import { listRecordingRows, type RecordingFilters, type RecordingPageRow } from './catalogue-queries.js';
import { readStoreEvents } from './store-events.js';
import type { RecordingReadDeps } from './recording-caches.js';
import type { ChannelGroup, TrainingWindow, WindowLabel, WindowList } from '../client/index.js';
import { emptySplitWarnings, eventWarnings, fixedWarnings, noRecordingWarning, type EventTally } from './window-list-warnings.js';

export interface WindowSpec {
  recordings: RecordingFilters;
  fixed?: { length_s: number; stride_s?: number };
  /** `mapping`: an event's trial_type (or value) → its label, a string or an integer class index, kept as given. */
  events?: { mapping: Record<string, WindowLabel>; by: 'trial_type' | 'value'; offset_s: number; length_s: number };
  split?: { by: 'subject' | 'session' | 'recording'; fractions: { train: number; valid: number; test: number }; seed: number | string };
  /** The channel group windows count samples in, by modality (e.g. `eeg`); the first group when left out. */
  modality?: string;
}

export type { TrainingWindow, WindowList } from '../client/index.js';

/** Most windows one list may hold; the answer says how to narrow it. */
export const MAX_WINDOWS = 1_000_000;
/** Most recordings one list may cover. */
export const MAX_LIST_RECORDINGS = 20_000;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** JSON with object keys sorted, so that equal bodies hash alike whatever order their keys came in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function unitOf(by: 'subject' | 'session' | 'recording', row: RecordingPageRow): string {
  if (by === 'recording') return `${row.dataset_id}/${row.zarr}`;
  const subject = `${row.dataset_id}/sub-${row.subject ?? row.zarr}`;
  return by === 'subject' ? subject : `${subject}/ses-${row.session ?? ''}`;
}

/**
 * Assigns every unit to a split: units ordered by SHA-256 of (seed, unit), then the first `train` share to
 * train, the next `valid` share to valid, the rest to test. A unit has one split, so its windows do too.
 */
export function assignSplits(units: string[], fractions: { train: number; valid: number; test: number }, seed: number | string): Map<string, 'train' | 'valid' | 'test'> {
  const total = fractions.train + fractions.valid + fractions.test;
  const ordered = [...new Set(units)].map((u) => ({ u, key: sha256(`${seed}\u0000${u}`) })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const nTrain = Math.round((ordered.length * fractions.train) / total);
  const nValid = Math.round((ordered.length * (fractions.train + fractions.valid)) / total) - nTrain;
  const out = new Map<string, 'train' | 'valid' | 'test'>();
  ordered.forEach(({ u }, i) => out.set(u, i < nTrain ? 'train' : i < nTrain + nValid ? 'valid' : 'test'));
  return out;
}

function chooseGroup(groups: ChannelGroup[], modality: string | undefined): ChannelGroup | undefined {
  return modality ? groups.find((g) => g.modality === modality) : groups[0];
}

export async function listWindows(deps: RecordingReadDeps, user: User | undefined, spec: WindowSpec): Promise<WindowList> {
  if (!spec.fixed === !spec.events) throw new NdsError('validation_failed', { message: 'Give either fixed or events windows.', details: ['fixed: {length_s, stride_s} or events: {mapping, by, offset_s, length_s}'] });
  const rows: RecordingPageRow[] = [];
  for (;;) {
    const last = rows.at(-1);
    const page = await listRecordingRows(deps.db, user, spec.recordings, { limit: 1000, ...(last ? { after: { dataset_id: last.dataset_id, zarr: last.zarr } } : {}) });
    rows.push(...page);
    if (page.length < 1000) break;
    if (rows.length > MAX_LIST_RECORDINGS) throw new NdsError('validation_failed', { message: `The filters select more than ${MAX_LIST_RECORDINGS} recordings.`, details: ['recordings: narrow the filters (dataset, task, subject...)'] });
  }
  const sourceCommits: Record<string, string | null> = {};
  for (const row of rows) sourceCommits[row.dataset_id] = row.source_commit;
  const splits = spec.split ? assignSplits(rows.map((r) => unitOf(spec.split!.by, r)), spec.split.fractions, spec.split.seed) : undefined;

  const windows: TrainingWindow[] = [];
  const tally: EventTally = { keys: new Map(), matched: new Map(), withoutEvents: 0, outside: 0, recordings: rows.length };
  let shorter = 0;
  const add = (row: RecordingPageRow, group: ChannelGroup, start: number, length: number, label: WindowLabel | null) => {
    if (start < 0 || start + length > group.n_samples) {
      tally.outside++; // past either end: left out
      return;
    }
    if (windows.length >= MAX_WINDOWS) throw new NdsError('validation_failed', { message: `The list would hold more than ${MAX_WINDOWS} windows.`, details: ['narrow the recordings, or lengthen the stride'] });
    windows.push({
      dataset_id: row.dataset_id,
      path: row.path,
      group: group.name,
      start_sample: start,
      n_samples: length,
      start_s: start / group.rate,
      label,
      subject: row.subject,
      session: row.session,
      split: splits?.get(unitOf(spec.split!.by, row)) ?? null,
    });
  };
  for (const row of rows) {
    const group = chooseGroup(row.groups, spec.modality);
    if (!group) continue;
    if (spec.fixed) {
      const length = Math.round(spec.fixed.length_s * group.rate);
      const stride = Math.round((spec.fixed.stride_s ?? spec.fixed.length_s) * group.rate);
      if (length <= 0 || stride <= 0) throw new NdsError('validation_failed', { message: 'Windows need at least one sample.', details: [`fixed.length_s and stride_s: at least ${1 / group.rate} s at ${group.rate} Hz`] });
      if (length > group.n_samples) shorter++;
      for (let start = 0; start + length <= group.n_samples; start += stride) add(row, group, start, length, null);
    } else {
      const ev = spec.events!;
      if (row.events.n_events === 0) {
        tally.withoutEvents++;
        continue;
      }
      const store = await deps.recordingCaches.storeMetadata.read(row.dataset_id, row.zarr);
      if (!store) continue;
      const length = Math.round(ev.length_s * group.rate);
      if (length <= 0) throw new NdsError('validation_failed', { message: 'Windows need at least one sample.', details: [`events.length_s: at least ${1 / group.rate} s at ${group.rate} Hz`] });
      for (const event of await readStoreEvents(deps.objects, store, group.name)) {
        const key = ev.by === 'value' ? event.value : event.trial_type;
        if (key !== null) tally.keys.set(key, (tally.keys.get(key) ?? 0) + 1);
        if (key === null || !Object.hasOwn(ev.mapping, key)) continue;
        tally.matched.set(key, (tally.matched.get(key) ?? 0) + 1);
        add(row, group, Math.round((event.onset + ev.offset_s) * group.rate), length, ev.mapping[key]!);
      }
    }
  }
  const warnings =
    rows.length === 0
      ? [noRecordingWarning(spec.recordings)]
      : [
          ...(spec.events ? eventWarnings(spec.events, tally) : fixedWarnings(spec.fixed!, shorter, rows.length)),
          ...(spec.split && windows.length > 0 ? emptySplitWarnings(spec.split, windows, new Set(rows.map((r) => unitOf(spec.split!.by, r))).size) : []),
        ];
  const hash = sha256(canonical({ spec, source_commits: sourceCommits }));
  return { hash, source_commits: sourceCommits, windows, warnings };
}

export const WINDOW_COLUMNS = ['dataset_id', 'path', 'group', 'start_sample', 'n_samples', 'start_s', 'label', 'subject', 'session', 'split'] as const;

/** One CSV line of a window (RFC 4180 quoting; empty for null). */
export function windowCsvLine(w: TrainingWindow): string {
  return WINDOW_COLUMNS.map((c) => {
    const v = w[c];
    if (v === null) return '';
    const text = String(v);
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }).join(',');
}
