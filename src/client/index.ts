/**
 * The nds client for ML code: list recordings, read exact signal windows, list training windows, and stream
 * batches of windows with a bounded number of requests in flight. HTTP only (global `fetch`), so it runs in
 * Node ≥ 20, Deno, Bun and browsers, and imports nothing of the server. Where there is a `process` (Node,
 * Bun, Deno's Node mode) it finds its server and key as the `nds` command does: `NDS_API_URL`,
 * `NDS_API_KEY`, then what `nds auth login` stored (`server-identity.ts`, decision 0021).
 *
 * ```ts
 * import { NdsClient } from 'nds/client';
 * const nds = new NdsClient();   // or new NdsClient({ baseUrl: 'http://localhost:8080', apiKey: 'nds_...' })
 * const list = await nds.listWindows({ recordings: { task: 'rest' }, fixed: { length_s: 2 } });
 * for await (const batch of nds.batches(list.windows, { batchSize: 32 })) train(batch.data, batch.shape);
 * ```
 */
import { AnswerTooLargeError, ERROR_ANSWER_MAX_BYTES, JSON_ANSWER_MAX_BYTES, LISTING_ANSWER_MAX_BYTES, readBoundedAnswer, WINDOW_ANSWER_MAX_BYTES } from './bounded-answer.js';
import { credentialsFilePath, resolveServerIdentity, type ServerIdentity } from './server-identity.js';

export { DEFAULT_API_URL, type ServerIdentity } from './server-identity.js';

export interface RecordingFilters {
  dataset?: string;
  subject?: string;
  session?: string;
  task?: string;
  run?: string;
  datatype?: string;
  rate?: number;
  rate_min?: number;
  rate_max?: number;
  channels_min?: number;
  channels_max?: number;
  duration_min?: number;
  duration_max?: number;
  /** Labels that must all be present. */
  channel?: string[];
  channel_type?: string;
  event_type?: string;
  q?: string;
}

/** One channel of a recording, as the catalogue lists it. */
export interface Channel {
  label: string;
  type: string;
  unit: string;
  status: string;
}

/** The channels of a recording sampled at one rate: a group of its store (`eeg_256hz`, say). */
export interface ChannelGroup {
  name: string;
  modality: string;
  rate: number;
  n_channels: number;
  n_samples: number;
  duration_s: number;
  channels: Channel[];
}

/** How many events a recording has, in all and by `trial_type`. */
export interface EventCounts {
  n_events: number;
  counts: Record<string, number>;
}

/** A recording of the catalogue (`GET /recordings`): where it is, what it holds, and where to stream its store. */
export interface Recording {
  dataset_id: string;
  path: string;
  zarr: string;
  store_url: string;
  source_commit: string | null;
  entities: { subject: string | null; session: string | null; task: string | null; run: string | null; acquisition: string | null; datatype: string | null };
  groups: ChannelGroup[];
  events: EventCounts;
}

/** An exact window of one recording (`GET /datasets/:id/signal`): its span in seconds or samples, and which channels. */
export interface WindowRequest {
  dataset_id: string;
  path: string;
  start_sample?: number;
  n_samples?: number;
  start?: number;
  duration?: number;
  channels?: string[];
  channel_type?: string;
  group?: string;
  rate?: number;
}

export interface SignalWindow {
  /** Row-major [channels, samples], float32, physical units. */
  data: Float32Array;
  shape: [number, number];
  channels: string[];
  rate: number;
  startSample: number;
}

/** A window's label: as the events mapping gives it, a string or an integer class index (kept an integer). */
export type WindowLabel = string | number;

export interface WindowListRequest {
  recordings?: RecordingFilters;
  fixed?: { length_s: number; stride_s?: number };
  events?: { mapping: Record<string, WindowLabel>; by?: 'trial_type' | 'value'; offset_s?: number; length_s: number };
  split?: { by?: 'subject' | 'session' | 'recording'; fractions: { train: number; valid: number; test: number }; seed?: number | string };
  modality?: string;
}

export interface TrainingWindow {
  dataset_id: string;
  path: string;
  group: string;
  start_sample: number;
  n_samples: number;
  start_s: number;
  label: WindowLabel | null;
  subject: string | null;
  session: string | null;
  split: 'train' | 'valid' | 'test' | null;
}

export interface WindowList {
  hash: string;
  source_commits: Record<string, string | null>;
  windows: TrainingWindow[];
  /** What the list lacks, in sentences: no recording, no event of the mapping (and the event types there are), an empty split. */
  warnings: string[];
}

/** `listWindows` found no window: `warnings` says why. Pass `{ allowEmpty: true }` to get the empty list instead. */
export class EmptyWindowListError extends Error {
  constructor(readonly warnings: string[]) {
    super(`The window list is empty: ${warnings.length ? warnings.join(' ') : 'no recording matched.'}`);
    this.name = 'EmptyWindowListError';
  }
}

export interface Batch {
  windows: TrainingWindow[];
  /** One array per window, row-major [channels, samples]. */
  data: Float32Array[];
  shapes: Array<[number, number]>;
  labels: Array<WindowLabel | null>;
}

export interface BatchOptions {
  batchSize?: number;
  /** Most window requests in flight at once (default 4). */
  concurrency?: number;
  /** Batches read ahead of the consumer (default 2). */
  prefetch?: number;
  channels?: string[];
  channel_type?: string;
  rate?: number;
  /** Retries of a failed request (5xx, network), with exponential backoff (default 3). */
  retries?: number;
}

/**
 * The server refused (`status` and its error `code`), or answered more than any real answer holds (`code`
 * `answer_too_large`: the answer was read no further; check that the base URL names an nds server).
 */
export class NdsApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'NdsApiError';
  }
}

export interface NdsClientOptions {
  /** The server; left out: `NDS_API_URL`, else the URL `nds auth login` stored, else `http://localhost:8080`. */
  baseUrl?: string;
  /** The key; left out: `NDS_API_KEY`, else the key stored for that server, else none (public data only). */
  apiKey?: string;
  /**
   * The environment those defaults come from; left out: `process.env` where there is one (nothing in a
   * browser). The credentials file is read from it too (`XDG_CONFIG_HOME`, `HOME`); `{}` reads none.
   */
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
  retries?: number;
}

/** `process.env` of Node.js, Bun or Deno's Node mode; `{}` in a browser. The client's one read of the environment. */
function processEnv(): Record<string, string | undefined> {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The body of `res`, at most `maxBytes` of it: past that, an `NdsApiError` (`answer_too_large`) naming the bound. */
async function answerBytes(res: Response, maxBytes: number, path: string): Promise<ArrayBuffer> {
  try {
    return await readBoundedAnswer(res, maxBytes, path.split('?')[0]);
  } catch (err) {
    if (err instanceof AnswerTooLargeError) throw new NdsApiError(err.status, 'answer_too_large', err.message, { cause: err });
    throw err;
  }
}

async function answerJson<T>(res: Response, maxBytes: number, path: string): Promise<T> {
  return JSON.parse(new TextDecoder().decode(await answerBytes(res, maxBytes, path))) as T;
}

function query(params: Record<string, unknown>): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const v of value) out.append(key, String(v));
    else out.set(key, String(value));
  }
  return out.toString();
}

export class NdsClient {
  readonly #options: NdsClientOptions;
  readonly #fetch: typeof fetch;
  readonly #retries: number;
  #identity: Promise<ServerIdentity> | undefined;

  constructor(options: NdsClientOptions = {}) {
    this.#options = options;
    this.#fetch = options.fetch ?? fetch;
    this.#retries = options.retries ?? 3;
  }

  /** The server this client talks to and where its URL and key came from (found once, on first use). */
  identity(): Promise<ServerIdentity> {
    if (!this.#identity) {
      const env = this.#options.env ?? processEnv();
      const home = env.XDG_CONFIG_HOME || env.HOME;
      this.#identity = resolveServerIdentity({
        baseUrl: this.#options.baseUrl,
        apiKey: this.#options.apiKey,
        envUrl: env.NDS_API_URL,
        envKey: env.NDS_API_KEY,
        credentialsFile: home ? credentialsFilePath(env) : undefined,
      });
    }
    return this.#identity;
  }

  async #request(path: string, init: RequestInit = {}, retries = this.#retries): Promise<Response> {
    const { baseUrl, apiKey } = await this.identity();
    const headers = new Headers(init.headers);
    if (apiKey) headers.set('authorization', `Bearer ${apiKey}`);
    for (let attempt = 0; ; attempt++) {
      let res: Response | undefined;
      try {
        res = await this.#fetch(`${baseUrl}${path}`, { ...init, headers });
      } catch (err) {
        if (attempt >= retries) throw err;
      }
      if (res && res.ok) return res;
      if (res && (res.status < 500 || attempt >= retries)) {
        const body = await answerJson<{ error?: string; message?: string }>(res, ERROR_ANSWER_MAX_BYTES, path).catch((err: unknown): { error?: string; message?: string } => {
          if (err instanceof NdsApiError) throw err;
          return {};
        });
        throw new NdsApiError(res.status, body.error ?? `http_${res.status}`, body.message ?? res.statusText);
      }
      await res?.body?.cancel();
      await sleep(200 * 2 ** attempt);
    }
  }

  /** Every recording matching `filters` that the key may read, following the cursor to the end. */
  async listRecordings(filters: RecordingFilters = {}): Promise<Recording[]> {
    const out: Recording[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/recordings?${query({ ...filters, limit: 1000, cursor })}`;
      const page = await answerJson<{ recordings: Recording[]; next_cursor: string | null }>(await this.#request(path), JSON_ANSWER_MAX_BYTES, path);
      out.push(...page.recordings);
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  }

  /** One window in physical units, float32, as raw samples (`format=f32`). */
  async readWindow(req: WindowRequest): Promise<SignalWindow> {
    const { dataset_id, channels, ...rest } = req;
    const path = `/datasets/${dataset_id}/signal?${query({ ...rest, channels: channels?.join(','), format: 'f32' })}`;
    const res = await this.#request(path);
    const shape = res.headers.get('x-nds-shape')!.split(',').map(Number) as [number, number];
    const bytes = await answerBytes(res, WINDOW_ANSWER_MAX_BYTES, path);
    return {
      data: new Float32Array(bytes),
      shape,
      channels: (res.headers.get('x-nds-channels') ?? '').split(',').filter(Boolean).map(decodeURIComponent),
      rate: Number(res.headers.get('x-nds-rate')),
      startSample: Number(res.headers.get('x-nds-start-sample')),
    };
  }

  /**
   * A deterministic list of training windows (`POST /windows`). An empty list throws `EmptyWindowListError`
   * with the server's warnings (what the recordings do have) unless `allowEmpty`; a list that is not empty
   * still carries its warnings (a split left empty, a label that matched nothing) in `warnings`.
   */
  async listWindows(body: WindowListRequest, options: { allowEmpty?: boolean } = {}): Promise<WindowList> {
    const res = await this.#request('/windows', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', accept: 'application/json' } });
    const list = await answerJson<WindowList>(res, LISTING_ANSWER_MAX_BYTES, '/windows');
    list.warnings ??= [];
    if (list.windows.length === 0 && !options.allowEmpty) throw new EmptyWindowListError(list.warnings);
    return list;
  }

  /**
   * Batches of windows in the order given, read with at most `concurrency` requests in flight and up to
   * `prefetch` batches ahead of the consumer.
   */
  async *batches(windows: readonly TrainingWindow[], options: BatchOptions = {}): AsyncGenerator<Batch> {
    const batchSize = options.batchSize ?? 32;
    const concurrency = Math.max(1, options.concurrency ?? 4);
    const prefetch = Math.max(1, options.prefetch ?? 2);
    let active = 0;
    const waiting: Array<() => void> = [];
    const slot = async () => {
      while (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
      active++;
    };
    const release = () => {
      active--;
      waiting.shift()?.();
    };
    const read = async (w: TrainingWindow) => {
      await slot();
      try {
        return await this.readWindow({
          dataset_id: w.dataset_id,
          path: w.path,
          group: w.group,
          start_sample: w.start_sample,
          n_samples: w.n_samples,
          ...(options.channels ? { channels: options.channels } : {}),
          ...(options.channel_type ? { channel_type: options.channel_type } : {}),
          ...(options.rate ? { rate: options.rate } : {}),
        });
      } finally {
        release();
      }
    };
    const load = async (slice: readonly TrainingWindow[]): Promise<Batch> => {
      const read_ = await Promise.all(slice.map(read));
      return { windows: [...slice], data: read_.map((r) => r.data), shapes: read_.map((r) => r.shape), labels: slice.map((w) => w.label) };
    };
    const pending: Array<Promise<Batch>> = [];
    let next = 0;
    const fill = () => {
      while (pending.length < prefetch && next < windows.length) {
        const p = load(windows.slice(next, next + batchSize));
        p.catch(() => undefined); // surfaced when awaited below
        pending.push(p);
        next += batchSize;
      }
    };
    fill();
    while (pending.length > 0) {
      const batch = await pending.shift()!;
      fill();
      yield batch;
    }
  }
}
