/**
 * Recordings for ML on the command line: `nds recordings list` (the catalogue, with its filters),
 * `nds windows export` (a window list to a file: JSON, NDJSON or CSV) and `nds signal get` (one exact window
 * to a `.npy` or raw float32 file).
 */
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { LISTING_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import type { Recording } from '../client/index.js';
import { ApiClient, ApiError } from './api-client.js';
import { CliError } from './cli-error.js';
import { info, printJson, printTable } from './output.js';


function number(name: string) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new CliError(`${name} must be a non-negative number, got "${v}"`);
    return n;
  };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The catalogue filters, as options: shared by `recordings list` and `windows export`. */
function filterOptions(command: Command): Command {
  return command
    .option('--dataset <id>', 'only this dataset')
    .option('--subject <label>', 'BIDS subject (without sub-)')
    .option('--session <label>', 'BIDS session')
    .option('--task <label>', 'BIDS task')
    .option('--run <label>', 'BIDS run')
    .option('--datatype <type>', 'eeg, emg, ieeg...')
    .option('--rate <hz>', 'a group at exactly this rate', number('--rate'))
    .option('--rate-min <hz>', 'a group at this rate or above', number('--rate-min'))
    .option('--rate-max <hz>', 'a group at this rate or below', number('--rate-max'))
    .option('--channels-min <n>', 'at least n channels', number('--channels-min'))
    .option('--channels-max <n>', 'at most n channels', number('--channels-max'))
    .option('--duration-min <s>', 'at least this long, seconds', number('--duration-min'))
    .option('--duration-max <s>', 'at most this long, seconds', number('--duration-max'))
    .option('--channel <label>', 'a channel label that must be present (repeatable)', collect)
    .option('--channel-type <type>', 'a channel type that must be present (EEG, EMG...)')
    .option('--event-type <trial_type>', 'a trial_type that must occur')
    .option('-q, --query <words>', 'words in the path, task, channel labels or event types');
}

const FILTERS = ['dataset', 'subject', 'session', 'task', 'run', 'datatype', 'rate', 'rateMin', 'rateMax', 'channelsMin', 'channelsMax', 'durationMin', 'durationMax', 'channel', 'channelType', 'eventType'] as const;
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function filtersOf(opts: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of FILTERS) if (opts[name] !== undefined) out[snake(name)] = opts[name];
  if (opts.query !== undefined) out.q = opts.query;
  return out;
}

function searchParams(filters: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filters)) {
    if (Array.isArray(value)) for (const v of value) params.append(key, String(v));
    else params.set(key, String(value));
  }
  return params;
}

async function failOn(api: ApiClient, res: Response): Promise<Response> {
  if (res.ok) return res;
  const text = await api.text(res);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { message: text.slice(0, 200) };
  }
  throw new ApiError(res.status, body);
}

/** The warnings of `POST /windows` from its `X-NDS-Warnings` header (a percent-encoded JSON array). */
function windowWarnings(header: string | null): string[] {
  if (!header) return [];
  try {
    const parsed = JSON.parse(decodeURIComponent(header)) as unknown;
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

/** How many windows an answer of `POST /windows` holds, in the format asked for. */
function windowCount(format: string, text: string): number {
  if (format === 'json') return (JSON.parse(text) as { windows: unknown[] }).windows.length;
  if (format === 'ndjson') return (JSON.parse(text.slice(0, text.indexOf('\n'))) as { n_windows: number }).n_windows;
  return text.split('\n').filter((line) => line !== '').length - 1;
}

export function registerRecordingsCommands(program: Command): void {
  const recordings = program.command('recordings').description('the recording catalogue: converted recordings across datasets');
  filterOptions(recordings.command('list').description('list recordings you may read, filtered by entities, rate, channels, duration and events'))
    .option('--limit <n>', 'most recordings to list (all when left out)', number('--limit'))
    .option('--json', 'machine output')
    .action(async (opts: Record<string, unknown> & { limit?: number; json?: boolean }) => {
      const api = await ApiClient.fromEnvironment();
      const filters = filtersOf(opts);
      const all: Recording[] = [];
      let cursor: string | null = null;
      do {
        const params = searchParams(filters);
        params.set('limit', String(Math.min(1000, opts.limit ?? 1000)));
        if (cursor) params.set('cursor', cursor);
        const page: { recordings: Recording[]; next_cursor: string | null } = await api.request(`/recordings?${params}`);
        all.push(...page.recordings);
        cursor = page.next_cursor;
      } while (cursor && (opts.limit === undefined || all.length < opts.limit));
      const shown = opts.limit === undefined ? all : all.slice(0, opts.limit);
      if (opts.json) return printJson({ recordings: shown });
      printTable(
        shown.map((r) => ({
          dataset: r.dataset_id,
          path: r.path,
          task: r.entities.task ?? '',
          rates: r.groups.map((g) => `${g.rate}Hz`).join(' '),
          channels: r.groups.reduce((s, g) => s + g.n_channels, 0),
          seconds: Math.max(0, ...r.groups.map((g) => g.duration_s)).toFixed(1),
          events: r.events.n_events,
        })),
        ['dataset', 'path', 'task', 'rates', 'channels', 'seconds', 'events'],
      );
      info(`${shown.length} recording${shown.length === 1 ? '' : 's'}`);
    });

  const windows = program.command('windows').description('training window lists over the catalogue');
  filterOptions(windows.command('export').description('write a window list (fixed or event-locked, optionally split) to a file or stdout'))
    .option('--length <s>', 'window length, seconds', number('--length'))
    .option('--stride <s>', 'fixed windows: stride, seconds (default: the length)', number('--stride'))
    .option('--events <mapping>', 'event-locked: trial_type=label pairs, comma-separated (e.g. eyes_open=open,eyes_closed=closed; whole-number labels stay numbers: eyes_open=0,eyes_closed=1)')
    .option('--by <column>', 'events: match trial_type or value', 'trial_type')
    .option('--offset <s>', 'events: window start relative to the onset, seconds', Number, 0)
    .option('--split <fractions>', 'train,valid,test fractions (e.g. 0.7,0.15,0.15)')
    .option('--split-by <unit>', 'subject, session or recording', 'subject')
    .option('--seed <seed>', 'the split seed', '0')
    .option('--body <file>', 'the whole POST /windows body from a JSON file (other window options ignored)')
    .option('--format <format>', 'json, ndjson or csv', 'json')
    .option('--out <file>', 'where to write (stdout when left out)')
    .action(async (opts: Record<string, unknown> & { length?: number; stride?: number; events?: string; by: string; offset: number; split?: string; splitBy: string; seed: string; body?: string; format: string; out?: string }) => {
      const accept = { json: 'application/json', ndjson: 'application/x-ndjson', csv: 'text/csv' }[opts.format];
      if (!accept) throw new CliError(`--format must be json, ndjson or csv, got "${opts.format}"`);
      let body: Record<string, unknown>;
      if (opts.body) {
        body = JSON.parse(await readFile(opts.body, 'utf8')) as Record<string, unknown>;
      } else {
        if (opts.length === undefined) throw new CliError('--length is required (or give the whole request with --body)');
        body = { recordings: filtersOf(opts) };
        if (opts.events) {
          const mapping = Object.fromEntries(opts.events.split(',').map((pair) => {
            const [key, label] = pair.split('=');
            if (!key || !label) throw new CliError(`--events takes key=label pairs, got "${pair}"`);
            // A whole number is a class index and stays a number (left=0,right=1); anything else is a text label.
            return [key, /^-?\d{1,9}$/.test(label) ? Number(label) : label];
          }));
          body.events = { mapping, by: opts.by, offset_s: opts.offset, length_s: opts.length };
        } else {
          body.fixed = { length_s: opts.length, ...(opts.stride !== undefined ? { stride_s: opts.stride } : {}) };
        }
        if (opts.split) {
          const [train, valid, test] = opts.split.split(',').map(Number);
          if (![train, valid, test].every((f) => f !== undefined && Number.isFinite(f) && f >= 0)) throw new CliError('--split takes three fractions: train,valid,test');
          body.split = { by: opts.splitBy, fractions: { train, valid, test }, seed: /^-?\d+$/.test(opts.seed) ? Number(opts.seed) : opts.seed };
        }
      }
      const api = await ApiClient.fromEnvironment();
      const res = await failOn(api, await api.raw('/windows', { method: 'POST', body, headers: { accept } }));
      const text = await api.text(res, LISTING_ANSWER_MAX_BYTES);
      const warnings = windowWarnings(res.headers.get('x-nds-warnings'));
      for (const w of warnings) info(`warning: ${w}`);
      // A list of no window trains nothing: say so and fail, rather than write a header-only file.
      if (windowCount(opts.format, text) === 0) throw new CliError(`no window: the list is empty${opts.out ? `; ${opts.out} was not written` : ''}${warnings.length ? '' : ' (no recording matched)'}`);
      if (!opts.out) {
        process.stdout.write(text);
        return;
      }
      await pipeline(Readable.from([text]), createWriteStream(opts.out));
      info(`wrote ${opts.out}: ${windowCount(opts.format, text)} windows (hash ${res.headers.get('x-nds-windows-hash')})`);
    });

  const signal = program.command('signal').description('exact signal windows');
  signal
    .command('get <dataset> <path>')
    .description('write one window of a recording (physical units) to a .npy file, or raw float32 with --format f32')
    .option('--start <s>', 'window start, seconds', number('--start'))
    .option('--duration <s>', 'window length, seconds', number('--duration'))
    .option('--start-sample <n>', 'window start, samples', number('--start-sample'))
    .option('--n-samples <n>', 'window length, samples', number('--n-samples'))
    .option('--channels <labels>', 'comma-separated channel labels')
    .option('--channel-type <type>', 'every channel of this type')
    .option('--group <name>', 'the channel group, when the recording has several rates')
    .option('--rate <hz>', 'resample to this rate', number('--rate'))
    .option('--dtype <type>', 'float32 or float64 (npy)', 'float32')
    .option('--format <format>', 'npy or f32', 'npy')
    .requiredOption('--out <file>', 'where to write')
    .action(async (dataset: string, path: string, opts: { start?: number; duration?: number; startSample?: number; nSamples?: number; channels?: string; channelType?: string; group?: string; rate?: number; dtype: string; format: string; out: string }) => {
      if (!['npy', 'f32'].includes(opts.format)) throw new CliError(`--format must be npy or f32, got "${opts.format}"`);
      const params = new URLSearchParams({ path, format: opts.format, dtype: opts.dtype });
      const set = (key: string, value: unknown) => value !== undefined && params.set(key, String(value));
      set('start', opts.start);
      set('duration', opts.duration);
      set('start_sample', opts.startSample);
      set('n_samples', opts.nSamples);
      set('channels', opts.channels);
      set('channel_type', opts.channelType);
      set('group', opts.group);
      set('rate', opts.rate);
      const api = await ApiClient.fromEnvironment();
      const res = await failOn(api, await api.raw(`/datasets/${encodeURIComponent(dataset)}/signal?${params}`, { headers: { accept: '*/*' } }));
      await pipeline(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream), createWriteStream(opts.out));
      info(`wrote ${opts.out}: shape ${res.headers.get('x-nds-shape')} at ${res.headers.get('x-nds-rate')} Hz, channels ${decodeURIComponent(res.headers.get('x-nds-channels') ?? '')}`);
    });
  signal
    .command('events <dataset> <path>')
    .description("a recording's events (every _events.tsv column, with each event's sample index) as JSON or CSV")
    .option('--format <format>', 'json or csv', 'json')
    .option('--out <file>', 'where to write (default: standard output)')
    .action(async (dataset: string, path: string, opts: { format: string; out?: string }) => {
      if (!['json', 'csv'].includes(opts.format)) throw new CliError(`--format must be json or csv, got "${opts.format}"`);
      const params = new URLSearchParams({ path, format: opts.format });
      const api = await ApiClient.fromEnvironment();
      const res = await failOn(api, await api.raw(`/datasets/${encodeURIComponent(dataset)}/events?${params}`, { headers: { accept: '*/*' } }));
      const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
      if (opts.out) {
        await pipeline(body, createWriteStream(opts.out));
        info(`wrote ${opts.out}`);
      } else {
        await pipeline(body, process.stdout, { end: false });
      }
    });
}
