/**
 * `nds datasets upload --wait`: waits for the conversion of the version just made, then tells each
 * recording's result: converted (groups, channels, duration) or failed (code and reason). The results come
 * from the copy's `index.json`, or from `GET /datasets/:id/recordings` where the index is closed to the caller.
 */
import { LISTING_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { ApiError, type ApiClient } from './api-client.js';
import { CliError } from './cli-error.js';

interface DatasetState {
  zarr_status: string | null;
  zarr_source_commit: string | null;
  zarr_store_count: number | null;
  /** Why the conversion failed as a whole (servers before 2026-11 leave it out). */
  zarr_error?: string | null;
}

export interface RecordingResult {
  path: string;
  zarr: string;
  status: 'converted' | 'failed';
  groups?: number;
  channels?: number;
  duration_s?: number;
  code?: string;
  reason?: string;
}

export interface ConversionOutcome {
  status: 'ready' | 'failed';
  /** With `failed`: why, as the server tells the owner (the source repository refused or unreachable). */
  error?: string;
  source_commit: string | null;
  recordings: RecordingResult[];
  failures: number;
}

interface IndexLike {
  stores?: Array<{ path: string; zarr: string; groups?: Array<{ n_channels?: number; duration_s?: number }> }>;
  recordings?: Array<{ path: string; zarr: string; groups?: Array<{ n_channels?: number; duration_s?: number }> }>;
  failures?: Array<{ path: string; zarr: string; code: string; reason: string }>;
}

export interface WaitOptions {
  /** The `zarr_source_commit` the conversion of the new version records. */
  expectedCommit: string;
  timeoutMs: number;
  pollMs?: number;
  /** With no conversion seen under way for this long, the copy as it is is taken as the result (default 20 s). */
  quietMs?: number;
  onState?: (status: string) => void;
}

export async function waitForConversion(api: ApiClient, datasetId: string, options: WaitOptions): Promise<ConversionOutcome> {
  const id = encodeURIComponent(datasetId);
  const deadline = Date.now() + options.timeoutMs;
  let last = '';
  const started = Date.now();
  let busySeen = false;
  for (;;) {
    const d = await api.request<DatasetState>(`/datasets/${id}`);
    const status = d.zarr_status ?? 'none';
    if (status !== last) options.onState?.(status);
    last = status;
    if (status === 'pending' || status === 'converting') busySeen = true;
    if (status === 'failed') return { status: 'failed', ...(d.zarr_error ? { error: d.zarr_error } : {}), source_commit: d.zarr_source_commit, recordings: [], failures: 0 };
    if (status === 'ready' && d.zarr_source_commit === options.expectedCommit) break;
    // A push that changed no data file dispatches no conversion: the copy as it is answers for the version.
    if (!busySeen && status === 'ready' && Date.now() - started > (options.quietMs ?? 20_000)) {
      const results = await readResults(api, datasetId);
      return { status: 'ready', source_commit: d.zarr_source_commit, recordings: results, failures: results.filter((r) => r.status === 'failed').length };
    }
    if (Date.now() > deadline) {
      throw new CliError(`the conversion of ${datasetId} did not finish within ${Math.round(options.timeoutMs / 1000)} s (status ${status}); see it later with \`nds datasets show ${datasetId}\``);
    }
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
  const results = await readResults(api, datasetId);
  return { status: 'ready', source_commit: options.expectedCommit, recordings: results, failures: results.filter((r) => r.status === 'failed').length };
}

async function readResults(api: ApiClient, datasetId: string): Promise<RecordingResult[]> {
  const id = encodeURIComponent(datasetId);
  let index: IndexLike | undefined;
  // The copy's index.json through the server's object route; where that is closed to the caller, the
  // recordings route answers the same facts.
  try {
    index = await api.request<IndexLike>(`/objects/${id}/zarr/index.json`, { maxBytes: LISTING_ANSWER_MAX_BYTES });
  } catch (err) {
    if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 403)) throw err;
    index = await api.request<IndexLike>(`/datasets/${id}/recordings`, { maxBytes: LISTING_ANSWER_MAX_BYTES });
  }
  const converted = (index.recordings ?? index.stores ?? []).map((s): RecordingResult => {
    const groups = s.groups ?? [];
    return {
      path: s.path,
      zarr: s.zarr,
      status: 'converted',
      groups: groups.length,
      channels: groups.reduce((n, g) => n + (g.n_channels ?? 0), 0),
      duration_s: Math.max(0, ...groups.map((g) => g.duration_s ?? 0)),
    };
  });
  const failed = (index.failures ?? []).map((f): RecordingResult => ({ path: f.path, zarr: f.zarr, status: 'failed', code: f.code, reason: f.reason }));
  return [...converted, ...failed].sort((a, b) => a.path.localeCompare(b.path));
}

/** One line per recording, for people. */
export function describeOutcome(outcome: ConversionOutcome): string[] {
  if (outcome.status === 'failed') {
    return [outcome.error ? `the conversion failed as a whole: ${outcome.error}` : 'the conversion failed as a whole; the server log says why, and `nds admin zarr regenerate` retries it'];
  }
  if (outcome.recordings.length === 0) return ['no recording was found to convert'];
  return outcome.recordings.map((r) =>
    r.status === 'converted'
      ? `converted  ${r.path}: ${r.groups} ${r.groups === 1 ? 'group' : 'groups'}, ${r.channels} ${r.channels === 1 ? 'channel' : 'channels'}, ${formatDuration(r.duration_s ?? 0)}`
      : `failed     ${r.path}: ${r.code}: ${r.reason}`,
  );
}

function formatDuration(seconds: number): string {
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  return `${(seconds / 60).toFixed(1)} min`;
}
