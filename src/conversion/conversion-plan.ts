/**
 * What a conversion does, decided without touching a store: given the recordings of the source, the previous
 * `index.json` and the paths changed since its commit, which recordings to convert, which stores and failures
 * to keep as they are, and which stores to delete because their source is gone. Only a failure of the file is
 * kept; one of the service (`kind: 'service'`) is converted again.
 */
import path from 'node:path';
import type { FoundRecording } from '../formats/bids/find-recordings.js';
import type { IndexFailure, StoreIndex, StoreIndexEntry } from '../formats/zarr/store-index.js';

/** One recording of the source, in source order: converted now, or its previous store or failure kept. */
export type RecordingStep =
  | { action: 'convert'; recording: FoundRecording }
  | { action: 'keep_store'; recording: FoundRecording; store: StoreIndexEntry }
  | { action: 'keep_failure'; recording: FoundRecording; failure: IndexFailure & { kind: 'file' } };

export interface ConversionPlan {
  steps: RecordingStep[];
  /** How many steps convert (the progress total). */
  convertCount: number;
  /** Store folders (under `<id>/zarr/`) of the previous index whose recording is gone from the source. */
  remove: string[];
}

export interface PlanInput {
  /** The recordings found in the source at `commit`. */
  recordings: FoundRecording[];
  /** The index of the copy as it is; undefined when there is none (or it is unreadable). */
  previous: StoreIndex | undefined;
  /** The source commit being converted. */
  commit: string;
  /** Paths changed between the previous index's commit and `commit`; undefined when unknown (no diff). */
  changed: string[] | undefined;
  /** Convert everything and ignore the previous index. */
  full: boolean;
  /**
   * Stores written in place by jobs that ended without publishing (`unpublishedStores`): their recordings are
   * converted again, and those whose recording is gone from the source are deleted.
   */
  unpublished?: ReadonlyArray<{ path: string; zarr: string }>;
}

const SIDECAR = /_(channels\.tsv|events\.tsv|events\.json|electrodes\.tsv|coordsystem\.json|eeg\.json|emg\.json|ieeg\.json)$/;

function stemOf(name: string): string {
  return name.replace(/\.[^.]+$/, '');
}

/**
 * The commit to diff from, so `changed` can be computed before planning: the previous index's commit when
 * it differs from `commit`; undefined when no diff is needed (no previous index, same commit, or `full`).
 */
export function diffBase(previous: StoreIndex | undefined, commit: string, full: boolean): string | undefined {
  const base = full ? undefined : previous?.source_commit;
  return base && base !== commit ? base : undefined;
}

/**
 * Recordings a set of changed paths touches: a data file or companion with the recording's stem in its folder,
 * or a sidecar at the recording's level or above (BIDS inheritance). A superset is fine: it only costs time.
 */
export function affectedRecordings(recordings: FoundRecording[], changed: string[]): Set<string> {
  const out = new Set<string>();
  for (const p of changed) {
    const dir = path.posix.dirname(p);
    const name = path.posix.basename(p);
    for (const r of recordings) {
      const rdir = path.posix.dirname(r.path);
      if (dir === rdir && stemOf(name) === stemOf(path.posix.basename(r.path))) out.add(r.path);
      else if (SIDECAR.test(name) && (dir === '.' || rdir === dir || rdir.startsWith(`${dir}/`))) out.add(r.path);
    }
  }
  return out;
}

/**
 * A previous failure the conversion keeps: the file's own. One the service caused (a store that refused its
 * writes, workers lost on it) says nothing about the file, so it is tried again.
 */
function isFileFailure(failure: IndexFailure): boolean {
  return failure.kind !== 'service';
}

/**
 * Which recordings to convert: all without a usable previous index, else those new, never converted (or
 * failed for the service's faults) or changed.
 */
function recordingsToConvert(input: PlanInput, previous: StoreIndex | undefined, known: (p: string) => boolean): Set<string> {
  const all = new Set(input.recordings.map((r) => r.path));
  const prevCommit = previous?.source_commit;
  if (!previous || !prevCommit) return all;
  const unknown = input.recordings.filter((r) => !known(r.path)).map((r) => r.path);
  if (prevCommit === input.commit) return new Set(unknown);
  const toConvert = input.changed ? affectedRecordings(input.recordings, input.changed) : all;
  // A recording new to the tree, or never converted, is converted whatever the diff says.
  for (const p of unknown) toConvert.add(p);
  return toConvert;
}

export function planConversion(input: PlanInput): ConversionPlan {
  const previous = input.full ? undefined : input.previous;
  const previousStores = new Map((previous?.stores ?? []).map((s) => [s.path, s]));
  const previousFailures = new Map((previous?.failures ?? []).filter(isFileFailure).map((f) => [f.path, f]));
  const toConvert = recordingsToConvert(input, previous, (p) => previousStores.has(p) || previousFailures.has(p));
  const present = new Set(input.recordings.map((r) => r.path));
  for (const u of input.unpublished ?? []) if (present.has(u.path)) toConvert.add(u.path);
  const steps: RecordingStep[] = [];
  for (const recording of input.recordings) {
    if (toConvert.has(recording.path)) {
      steps.push({ action: 'convert', recording });
      continue;
    }
    const store = previousStores.get(recording.path);
    const failure = previousFailures.get(recording.path);
    if (store) steps.push({ action: 'keep_store', recording, store });
    // A failure of an index written before failures had a kind is kept as what it was read as: the file's.
    else if (failure) steps.push({ action: 'keep_failure', recording, failure: { ...failure, kind: 'file' } });
  }
  // Latest-only: a store whose source is gone goes (after the new ones were written), the index's or one an
  // unpublished job wrote.
  const gone = [...previousStores.values(), ...(input.unpublished ?? [])].filter((s) => !present.has(s.path)).map((s) => s.zarr);
  return { steps, convertCount: toConvert.size, remove: [...new Set(gone)] };
}
