/**
 * The processes of an nds cluster on one machine (test/cluster, bench/cluster.ts): `nds serve`, `nds worker`
 * and `nds gateway` started from bin/nds.js as an operator starts them, each with its own DATA_DIR, their JSON
 * log lines (stdout) kept to be searched; the object store of the test environment (a fresh bucket at
 * radosgw when it answers); and reading what `/metrics` says.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { storeVariants } from '../datasets/support.js';
import type { LogEntry } from './server-log.js';

export type NdsCommand = 'serve' | 'worker' | 'gateway';

export interface NdsProcess {
  name: string;
  command: NdsCommand;
  /** Where it answers: NODE_URL of an API node, the gateway's address, a worker's METRICS_PORT; '' when none. */
  url: string;
  dataDir: string;
  child: ChildProcess;
  /** The JSON log lines it wrote so far (stdout). */
  logs: LogEntry[];
  /** What it wrote for people so far (stderr). */
  stderr(): string;
  exited: Promise<number | null>;
  /** The pid it logs (its own namespace's: the pid in its conversion jobs' worker ids). */
  pid(): number | undefined;
  /** Resolves once it says it serves; rejects when it exits first or does not say so in time. */
  ready: Promise<NdsProcess>;
}

/** What each command prints on stderr once it serves. */
const READY: Record<NdsCommand, RegExp> = {
  serve: /nds is listening/,
  worker: /taking conversion jobs/,
  gateway: /nds gateway is listening on port (\d+)/,
};

/** Runs bin/nds.js once, so that it builds its bundle of these sources before several processes start at once. */
export function buildCliOnce(): Promise<void> {
  return new Promise((resolve) => spawn(process.execPath, [path.resolve('bin/nds.js'), '--version'], { stdio: 'ignore' }).once('close', () => resolve()));
}

/**
 * Starts `nds <command> [args]` with `env` on top of this process's environment and `DATA_DIR=dataDir` (`ready` says
 * when it serves). NDS_SERVE_LAUNCHER is off: the pid started is the pid that serves. A worker given
 * `METRICS_PORT` answers at the port it names.
 */
export function startNdsProcess(options: {
  name: string;
  command: NdsCommand;
  args?: string[];
  dataDir: string;
  env: Record<string, string>;
  /** A command it runs under (`unshare --pid --fork ...`); its pid is then that command's. */
  under?: string[];
  timeoutMs?: number;
}): NdsProcess {
  const { name, command, dataDir, env } = options;
  const [program, ...args] = [...(options.under ?? []), process.execPath, path.resolve('bin/nds.js'), command, ...(options.args ?? [])] as [string, ...string[]];
  const child = spawn(program, args, {
    env: { ...process.env, NDS_SERVE_LAUNCHER: 'off', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  let partial = '';
  const logs: LogEntry[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    const lines = (partial + d.toString('utf8')).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      try {
        logs.push(JSON.parse(line) as LogEntry);
      } catch {
        // Not a log line.
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pid = () => logs.find((e) => typeof e.pid === 'number')?.pid as number | undefined;
  const node = { name, command, url: env.NODE_URL ?? '', dataDir, child, logs, stderr: () => text, exited, pid } as NdsProcess;
  node.ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within ${options.timeoutMs ?? 90_000} ms: ${text}`)), options.timeoutMs ?? 90_000);
    child.stderr!.on('data', (d: Buffer) => {
      text += d.toString();
      const ready = READY[command].exec(text);
      if (!ready) return;
      clearTimeout(timer);
      if (command === 'gateway') node.url = `http://127.0.0.1:${ready[1]}`;
      if (command === 'worker') node.url = /on (http:\/\/\S+)/.exec(text)?.[1]?.replace('localhost', '127.0.0.1') ?? '';
      resolve(node);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}): ${text}`));
    });
  });
  // A caller that stopped at another process's failure leaves this one's unawaited: not an unhandled rejection.
  node.ready.catch(() => {});
  return node;
}

/** Waits for a log line of `process` for which `match` is true (one already written counts). */
export async function loggedBy(proc: NdsProcess, match: (entry: LogEntry) => boolean, what: string, timeoutMs = 30_000): Promise<LogEntry> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = proc.logs.find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`${proc.name} logged no ${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The object store of the test environment: a fresh bucket at the radosgw of TEST_S3_URL when it answers
 * (scripts/ci/services/radosgw.sh; dataset ids restart at nd000001 in every database, so no bucket is shared);
 * otherwise undefined, and the caller falls back to a folder.
 */
export async function freshS3Store(): Promise<{ url: string; cleanup(): Promise<void> } | undefined> {
  const url = process.env.TEST_S3_URL;
  const endpoint = url ? new URL(url).searchParams.get('endpoint') : null;
  if (!endpoint) return undefined;
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(2000) });
  } catch {
    return undefined;
  }
  // A radosgw that answers but takes no writes (its store full) would hang the bucket's creation: say so instead.
  let timer: NodeJS.Timeout | undefined;
  const refused = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the S3 server at ${endpoint} answers but did not create a bucket within 30 s (is it full?)`)), 30_000);
  });
  try {
    const s3 = await Promise.race([storeVariants.find((v) => v.name.startsWith('S3'))!.setup(), refused]);
    return { url: s3.env.OBJECT_STORE_URL!, cleanup: s3.cleanup };
  } finally {
    clearTimeout(timer);
  }
}

/** The Prometheus text of `url`/metrics, read with the METRICS_TOKEN `token`. */
export async function scrapeMetrics(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200) throw new Error(`${url}/metrics answered ${res.status}: ${await res.text()}`);
  return res.text();
}

/**
 * The sum of the samples of metric `name` (a full sample name: `..._count`, `..._total`) whose labels include
 * `labels`; undefined when the text has no such series at all.
 */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(labels).some(([k, v]) => have.get(k) !== v)) continue;
    sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}
