/**
 * The sentences a window list carries when it holds less than was asked: no recording matched the filters,
 * the events mapping matched no event (naming the event types the recordings do have), a key of the mapping
 * matched nothing, windows fell past a recording's ends, recordings are shorter than a fixed window, a split
 * is left empty. An empty list is still a 200 (it is an answer), but never a silent one.
 */
import type { TrainingWindow, WindowLabel } from '../client/index.js';
import type { RecordingFilters } from './catalogue-queries.js';

/** What an event-locked list met on its way: every key seen (trial_type or value) with its count, and the misses. */
export interface EventTally {
  /** Events of the selected recordings by key, matched or not. */
  keys: Map<string, number>;
  /** Events whose key is in the mapping. */
  matched: Map<string, number>;
  /** Recordings without any event. */
  withoutEvents: number;
  /** Matched events whose window fell past either end of the recording. */
  outside: number;
  recordings: number;
}

/** Most event types named in one warning, each cut to `MAX_NAME` characters: the warnings travel in a header too. */
const MAX_NAMED = 20;
const MAX_NAME = 60;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
/** "The recording has" or "The 3 recordings have". */
const theRecordings = (n: number) => (n === 1 ? 'The recording has' : `The ${n} recordings have`);

function namedCounts(counts: Map<string, number>): string {
  const sorted = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0));
  const named = sorted.slice(0, MAX_NAMED).map(([k, n]) => `${JSON.stringify(k.length > MAX_NAME ? `${k.slice(0, MAX_NAME)}…` : k)} (${n})`);
  return `${named.join(', ')}${sorted.length > MAX_NAMED ? ` and ${sorted.length - MAX_NAMED} more` : ''}`;
}

export function noRecordingWarning(filters: RecordingFilters): string {
  const given = Object.entries(filters).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0));
  const shown = given.length ? given.map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`).join(', ') : 'none';
  return `No recording you may read matches the filters (${shown}); GET /recordings with the same filters lists what does.`;
}

export function eventWarnings(events: { mapping: Record<string, WindowLabel>; by: 'trial_type' | 'value' }, tally: EventTally): string[] {
  const out: string[] = [];
  const column = events.by;
  const matched = [...tally.matched.values()].reduce((a, b) => a + b, 0);
  if (matched === 0) {
    const wanted = Object.keys(events.mapping).map((k) => JSON.stringify(k)).join(', ');
    out.push(
      tally.keys.size
        ? `No event matches the mapping (${wanted} by ${column}). ${theRecordings(tally.recordings)} these ${column} values: ${namedCounts(tally.keys)}.`
        : `No event matches the mapping (${wanted} by ${column}): ${theRecordings(tally.recordings).toLowerCase()} no ${column} values${tally.withoutEvents ? ` (${tally.withoutEvents} without any event)` : ''}.`,
    );
    return out;
  }
  const unmatched = Object.keys(events.mapping).filter((k) => !tally.matched.has(k));
  if (unmatched.length) {
    const others = new Map([...tally.keys].filter(([k]) => !Object.hasOwn(events.mapping, k)));
    out.push(`${unmatched.map((k) => JSON.stringify(k)).join(', ')} of the mapping matched no event by ${column}${others.size ? `; other ${column} values of these recordings: ${namedCounts(others)}` : ''}.`);
  }
  if (tally.outside) out.push(`${plural(tally.outside, 'window')} of matched events fell past the start or end of ${tally.outside === 1 ? 'its recording and was' : 'their recordings and were'} left out (check offset_s and length_s).`);
  return out;
}

export function fixedWarnings(fixed: { length_s: number }, shorter: number, recordings: number): string[] {
  if (!shorter) return [];
  return [`${shorter === recordings && recordings === 1 ? 'The recording is' : `${shorter} of the ${plural(recordings, 'recording')} ${shorter === 1 ? 'is' : 'are'}`} shorter than fixed.length_s (${fixed.length_s} s) and give${shorter === 1 ? 's' : ''} no window.`];
}

/** One warning for each split that was asked for (a fraction above 0) and got no window. */
export function emptySplitWarnings(split: { by: string; fractions: { train: number; valid: number; test: number } }, windows: readonly TrainingWindow[], units: number): string[] {
  const filled = new Set(windows.map((w) => w.split));
  const fractions = `train ${split.fractions.train}, valid ${split.fractions.valid}, test ${split.fractions.test}`;
  return (['train', 'valid', 'test'] as const)
    .filter((name) => split.fractions[name] > 0 && !filled.has(name))
    .map(
      (name) =>
        `Split "${name}" is empty: ${plural(units, split.by)} cannot fill every split (${fractions}); split by a finer unit (split.by "session" or "recording"), or select more ${split.by}s.`,
    );
}
