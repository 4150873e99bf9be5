/**
 * Cluster bench (issue 23): requests per second of one mixed read load, in one run, against
 *   - `nds serve` alone (one process: API and its in-process gateway at /zarrproxy), reached directly;
 *   - nginx in front of one API node (`nds serve`, IN_PROCESS_WORKER=false), `/zarrproxy/` to `nds gateway`;
 *   - nginx in front of two API nodes, the same gateway.
 * The mix, per cycle of 8 requests from each connection: 1 catalogue page (`GET /recordings?limit=20`), 1
 * dataset page as JSON (`GET /datasets/:id`), 2 signal windows (`GET /datasets/:id/signal`, 512 samples of a
 * group, f32, at varied starts) and 4 Zarr chunk reads through the gateway (varied chunks), all anonymous on
 * the public demo dataset (`nds serve --demo`, made first). Each setup is run `--rounds` times, interleaved,
 * after a warm-up, with autocannon (`--connections`, `--seconds`). CPU seconds of each process are read from
 * /proc during each run, to show where the cores went.
 *
 * Everything runs on this machine: PostgreSQL (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
 * a database is made and dropped), a Redis of the bench's own (gateway cache, rate limits), a folder object store
 * (radosgw would put its own CPU on the same cores), nginx (one worker process), and the load generator itself.
 * Run: node --import tsx bench/cluster.ts [--seconds 10] [--connections 32] [--rounds 2]
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { buildCliOnce, startNdsProcess, type NdsProcess } from '../test/support/cluster.js';
import { startNginx, stopChild } from '../test/support/nginx.js';
import { cpuSeconds } from '../test/support/processes.js';
import { freePort } from '../test/support/test-server.js';
import { args, option } from './bench-args.js';

interface Result {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface Request {
  method: 'GET';
  path: string;
  headers?: Record<string, string>;
}
type Autocannon = (options: { url: string; connections: number; duration: number; requests: Request[] }) => Promise<Result>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const seconds = Number(option('seconds', '10'));
const connections = Number(option('connections', '32'));
const rounds = Number(option('rounds', '2'));
const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Free ports, all different. */
async function ports(n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) {
    const p = await freePort();
    if (!out.includes(p)) out.push(p);
  }
  return out;
}

/** The keys of the copy's level-0 chunks (`<store>/<group>/0/c/...`) in the folder store, relative to `<id>/zarr/`. */
function chunkKeys(root: string): string[] {
  const keys: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const key = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), key);
      else if (/\/0\/c\/\d+\/\d+$/.test(key)) keys.push(key);
    }
  };
  walk(root, '');
  return keys.sort();
}

/** Waits for `read` to give a value; throws with `context()` after `timeoutMs`. */
async function waitFor<T>(read: () => T | undefined, timeoutMs: number, context: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${context()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A redis-server of the bench's own, without persistence (as a cache and rate-limit store runs). */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  await waitFor(() => (out.includes('Ready to accept connections') ? true : undefined), 10_000, () => `redis-server did not start: ${out}`);
  return child;
}

/** CPU seconds of each process of this machine running `command` (PostgreSQL's backends, say), by pid. */
function cpuOfCommand(command: string): Map<number, number> {
  const found = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === command) found.set(Number(pid), cpuSeconds(Number(pid)));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** CPU seconds the processes of `after` used since `before` (one started meanwhile counts whole; one ended is lost). */
function cpuSince(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}

const work = await mkdtemp(path.join(tmpdir(), 'nds-bench-cluster-'));
const database = `nds_bench_${randomBytes(4).toString('hex')}`;
const processes: NdsProcess[] = [];
const nginxes: ChildProcess[] = [];
let redis: ChildProcess | undefined;
try {
  const loadAtStart = load();
  await buildCliOnce();
  await adminQuery(`create database ${database}`);
  const databaseUrl = new URL(admin);
  databaseUrl.pathname = `/${database}`;
  const [alonePort, api1Port, api2Port, gatewayPort, nginx1Port, nginx2Port, redisPort] = (await ports(7)) as [number, number, number, number, number, number, number];
  redis = await startRedis(redisPort);
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const objects = path.join(work, 'objects');
  const shared = {
    DATABASE_URL: databaseUrl.toString(),
    OBJECT_STORE_URL: `file:${objects}`,
    OBJECT_SIGNING_SECRET: randomBytes(24).toString('hex'),
    CACHE_REDIS_URL: redisUrl,
    RATE_LIMIT_REDIS_URL: redisUrl,
    ANONYMOUS_CATALOGUE_PER_MINUTE: '1000000',
    TRUSTED_PROXIES: '127.0.0.1/32',
    LOG_LEVEL: 'warn',
  };

  // The data: the public demo dataset, made and converted by one `nds serve --demo` that then stops.
  const seed = startNdsProcess({ name: 'seed', command: 'serve', args: ['--demo'], dataDir: path.join(work, 'seed'), env: { ...shared, PORT: String(alonePort), PUBLIC_URL: `http://127.0.0.1:${alonePort}` } });
  processes.push(seed);
  await seed.ready;
  const id = await waitFor(() => /demo dataset (\S+) converted/.exec(seed.stderr())?.[1], 300_000, () => seed.stderr());
  await stopChild(seed.child, 'SIGTERM');

  const nginx1Url = `http://127.0.0.1:${nginx1Port}`;
  const nginx2Url = `http://127.0.0.1:${nginx2Port}`;
  const aloneUrl = `http://127.0.0.1:${alonePort}`;
  const start = (name: string, command: 'serve' | 'gateway', port: number, env: Record<string, string>) => {
    const proc = startNdsProcess({ name, command, dataDir: path.join(work, name), env: { ...shared, PORT: String(port), ...env } });
    processes.push(proc);
    return proc;
  };
  const api = { IN_PROCESS_WORKER: 'false', PUBLIC_URL: nginx2Url };
  const [alone, api1, api2, gateway] = [
    start('alone', 'serve', alonePort, { IN_PROCESS_WORKER: 'false', PUBLIC_URL: aloneUrl }),
    start('api1', 'serve', api1Port, { ...api, NODE_URL: `http://127.0.0.1:${api1Port}` }),
    start('api2', 'serve', api2Port, { ...api, NODE_URL: `http://127.0.0.1:${api2Port}` }),
    start('gateway', 'gateway', gatewayPort, { PUBLIC_URL: nginx2Url, GATEWAY_WORKERS: '1' }),
  ];
  await Promise.all(processes.slice(1).map((p) => p.ready));
  const nginx1 = await startNginx(path.join(work, 'nginx1'), nginx1Port, [api1Port], { '/zarrproxy/': [gatewayPort] });
  nginxes.push(nginx1);
  const nginx2 = await startNginx(path.join(work, 'nginx2'), nginx2Port, [api1Port, api2Port], { '/zarrproxy/': [gatewayPort] });
  nginxes.push(nginx2);

  // The mix: 8 cycles of 8 requests (1 catalogue, 1 dataset, 2 windows, 4 chunks), each with other windows and chunks.
  const listed = (await (await fetch(`${aloneUrl}/datasets/${id}/recordings`)).json()) as { recordings: Array<{ path: string; groups: Array<{ name: string; n_samples: number }> }> };
  const recordings = listed.recordings.filter((r) => r.groups.length > 0);
  const chunks = chunkKeys(path.join(objects, id, 'zarr'));
  if (recordings.length === 0 || chunks.length === 0) throw new Error(`the demo dataset ${id} has no recordings or chunks to read`);
  const window = (k: number): Request => {
    const recording = recordings[k % recordings.length]!;
    const group = recording.groups[k % recording.groups.length]!;
    const startSample = (k * 7919) % Math.max(1, group.n_samples - 512);
    return { method: 'GET', path: `/datasets/${id}/signal?path=${encodeURIComponent(recording.path)}&group=${group.name}&start_sample=${startSample}&n_samples=512&format=f32` };
  };
  const requests: Request[] = [];
  for (let c = 0; c < 8; c++) {
    requests.push({ method: 'GET', path: '/recordings?limit=20' }, { method: 'GET', path: `/datasets/${id}`, headers: { accept: 'application/json' } }, window(2 * c), window(2 * c + 1));
    for (let k = 0; k < 4; k++) requests.push({ method: 'GET', path: `/zarrproxy/${id}/zarr/${chunks[((4 * c + k) * 7) % chunks.length]}` });
  }
  // Every request of the mix answers 200 through each setup (and warms the caches).
  for (const base of [aloneUrl, nginx1Url, nginx2Url]) {
    for (const r of requests) {
      const res = await fetch(`${base}${r.path}`, { headers: r.headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${base}${r.path} answered ${res.status}`);
    }
  }

  const setups: Array<{ name: string; url: string; parts: Record<string, number[]> }> = [
    { name: '`nds serve` alone', url: aloneUrl, parts: { serve: [alone.child.pid!] } },
    { name: 'nginx → 1 API node, gateway', url: nginx1Url, parts: { nginx: [nginx1.pid!], 'API nodes': [api1.child.pid!], gateway: [gateway.child.pid!] } },
    { name: 'nginx → 2 API nodes, gateway', url: nginx2Url, parts: { nginx: [nginx2.pid!], 'API nodes': [api1.child.pid!, api2.child.pid!], gateway: [gateway.child.pid!] } },
  ];
  for (const setup of setups) await autocannon({ url: setup.url, connections, duration: 3, requests });
  const rows: string[][] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const setup of setups) {
      const parts = Object.entries(setup.parts);
      const cpuBefore = parts.map(([, pids]) => pids.reduce((s, pid) => s + cpuSeconds(pid), 0));
      const postgresBefore = cpuOfCommand('postgres');
      const ownBefore = process.cpuUsage();
      const loadBefore = loadavg()[0]!.toFixed(2);
      const r = await autocannon({ url: setup.url, connections, duration: seconds, requests });
      const cores = (used: number) => (used / seconds).toFixed(2);
      const own = process.cpuUsage(ownBefore);
      const used = parts.map(([name, pids], i) => `${name} ${cores(pids.reduce((s, pid) => s + cpuSeconds(pid), 0) - cpuBefore[i]!)}`);
      used.push(`PostgreSQL ${cores(cpuSince(postgresBefore, cpuOfCommand('postgres')))}`, `load generator ${cores((own.user + own.system) / 1e6)}`);
      rows.push([setup.name, String(round), loadBefore, r.requests.average.toFixed(0), String(r.latency.p50), String(r.latency.p99), String(r.non2xx + r.errors + r.timeouts), used.join(', ')]);
    }
  }
  console.log(`cluster bench: ${availableParallelism()} cores, load ${loadAtStart} at start, ${load()} at the end; ${connections} connections, ${seconds} s a run, ${rounds} rounds`);
  console.log(`mix per cycle of 8: 1 GET /recordings?limit=20, 1 GET /datasets/${id} (JSON), 2 signal windows (512 samples, f32), 4 Zarr chunks through the gateway; ${recordings.length} recordings, ${chunks.length} chunks`);
  console.log('| setup | round | load (1 min) | req/s | p50 ms | p99 ms | non-2xx + errors | cores used (CPU s / s) |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
} finally {
  for (const n of nginxes) await stopChild(n, 'SIGQUIT');
  for (const p of processes) await stopChild(p.child, 'SIGTERM');
  await stopChild(redis, 'SIGTERM');
  await adminQuery(`drop database if exists ${database} with (force)`).catch(() => {});
  await rm(work, { recursive: true, force: true });
}
