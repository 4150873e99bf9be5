/**
 * Gateway benchmark: `nds gateway` (folder store) against nginx serving the same files from disk, both on
 * loopback, loaded by wrk with 64 connections. Two workloads: full GETs of 256 KiB chunks (the gateway
 * answers from its cache) and 64 KiB Range GETs of the same chunks (206).
 * Goals: ≥ 70 % of nginx's req/s on cache hits, ≥ 50 % on ranges, p99 < 20 ms.
 *
 * Each server gets a warm-up run of wrk before each measured run (steady state: V8 has compiled the hot
 * path, TCP buffers have grown). Beside req/s and latency it reports, for an in-process gateway, the delay
 * of its event loop (a stall of ours shows there), and for each server the TCP loss probes the kernel sent
 * (Linux: a sender that waited in vain for an ACK retransmits, after ~200 ms with one segment in flight).
 *
 * `--workers 1` (default) runs the gateway in this process on PGlite. `--workers N` runs the `nds gateway`
 * command with GATEWAY_WORKERS=N, which needs PostgreSQL: `--database-url postgres://...` (or
 * TEST_DATABASE_URL) names a server where a scratch database is made and dropped. `--nginx-workers N` sets
 * nginx's worker_processes, for a like-for-like comparison.
 * Run: node --import tsx bench/gateway.ts [--duration 5] [--warmup 2] [--chunks 16] [--connections 64]
 *        [--workers 1] [--nginx-workers 1] [--database-url postgres://...]
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { createUser } from '../src/accounts/users.js';
import { loadConfig } from '../src/core/config.js';
import type { Deps } from '../src/deps.js';
import { startGatewayServer } from '../src/gateway-server.js';
import { createLogger } from '../src/core/log.js';
import { closeDeps, openDeps, PROCESS_PARTS, type OpenedDeps } from '../src/lifecycle.js';
import { freePort } from '../test/support/test-server.js';
import { option } from './bench-args.js';

const duration = Number(option('duration', '5'));
const warmup = Number(option('warmup', '2'));
const nChunks = Number(option('chunks', '16'));
const connections = Number(option('connections', '64'));
const workers = Number(option('workers', '1'));
const nginxWorkers = Number(option('nginx-workers', '1'));
const adminUrl = option('database-url', process.env.TEST_DATABASE_URL ?? '');
if (workers > 1 && !adminUrl) throw new Error('--workers > 1 needs --database-url postgres://... (PGlite is one process\'s database)');
const CHUNK = 256 * 1024;
const RANGE = 64 * 1024;
const id = 'nd900001';
const prefix = `/${id}/zarr/bench.zarr/eeg_1000hz/0/c/0`;

const work = await mkdtemp(join(tmpdir(), 'nds-bench-gw-'));
const objectsDir = join(work, 'objects');
// nginx's worker runs as an unprivileged user when started by root: it must be able to read the files.
await chmod(work, 0o755);
let nginx: ChildProcess | undefined;
let inProcess: Awaited<ReturnType<typeof startGatewayServer>> | undefined;
let command: ChildProcess | undefined;
let seeding: OpenedDeps | undefined;
let dropDatabase: (() => Promise<void>) | undefined;
try {
  const gwPort = await freePort();
  // The gateway runs no migrations: its database is migrated first, as `nds migrate` would.
  let databaseUrl = `pglite:${join(work, 'db')}`;
  if (workers > 1) {
    const name = `nds_bench_${randomBytes(6).toString('hex')}`;
    await adminQuery(adminUrl, `create database ${name}`);
    dropDatabase = () => adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
  }
  const env = { PORT: String(gwPort), DATA_DIR: work, DATABASE_URL: databaseUrl, OBJECT_STORE_URL: `file:${objectsDir}`, LOG_LEVEL: 'warn', GATEWAY_WORKERS: String(workers) };
  const config = loadConfig(env);
  let deps: Deps;
  seeding = await openDeps({ config, log: createLogger('warn') }, PROCESS_PARTS.worker);
  if (workers === 1) {
    await closeDeps(seeding);
    seeding = undefined;
    inProcess = await startGatewayServer({ config, hostname: '127.0.0.1', log: createLogger('warn') });
    deps = inProcess.deps;
  } else {
    deps = seeding.deps;
  }
  const owner = await createUser(deps.db, { username: 'bench-owner', email: 'bench@example.org', status: 'approved', role: 'member', kind: 'person' }, deps.clock.now());
  await deps.db
    .insertInto('datasets')
    .values({ id, name: 'bench', owner_id: owner.id, visibility: 'public', source_repo: null, latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: 'ready', zarr_converted_at: null, zarr_store_count: 1, zarr_index_etag: null, zarr_source_commit: null })
    .execute();
  for (let i = 0; i < nChunks; i++) {
    const body = Buffer.alloc(CHUNK);
    for (let j = 0; j < CHUNK; j += 4) body.writeUInt32LE((i * 7919 + j) >>> 0, j);
    await deps.objects.put(`${prefix.slice(1)}/${i}`, body);
  }
  if (workers > 1) command = await startCommand({ ...process.env, ...env, CACHE_REDIS_URL: '' });

  const ngPort = await freePort();
  await writeFile(
    join(work, 'nginx.conf'),
    `daemon off;
worker_processes ${nginxWorkers};
pid ${work}/nginx.pid;
error_log ${work}/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path ${work}/ng-body;
  proxy_temp_path ${work}/ng-proxy;
  fastcgi_temp_path ${work}/ng-fcgi;
  uwsgi_temp_path ${work}/ng-uwsgi;
  scgi_temp_path ${work}/ng-scgi;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:${ngPort};
    root ${objectsDir};
    add_header Access-Control-Allow-Origin $http_origin always;
    add_header Vary Origin always;
  }
}
`,
  );
  nginx = spawn('/usr/sbin/nginx', ['-c', join(work, 'nginx.conf'), '-p', work, '-e', join(work, 'nginx-error.log')], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForUp(`http://127.0.0.1:${ngPort}${prefix}/0`);

  const gwBase = `http://127.0.0.1:${gwPort}`;
  const ngBase = `http://127.0.0.1:${ngPort}`;
  for (let i = 0; i < nChunks; i++) {
    const a = await fetch(`${gwBase}${prefix}/${i}`);
    const b = await fetch(`${ngBase}${prefix}/${i}`);
    if (a.status !== 200 || b.status !== 200 || (await a.arrayBuffer()).byteLength !== CHUNK || (await b.arrayBuffer()).byteLength !== CHUNK) throw new Error('warm-up failed');
  }

  const rows: string[] = [];
  const results: Record<string, { gw: WrkResult; ng: WrkResult }> = {};
  for (const workload of ['full', 'range'] as const) {
    const script = join(work, `${workload}.lua`);
    await writeFile(script, luaScript(workload));
    await wrk(`${ngBase}${prefix}/0`, script, warmup);
    const ngProbes = await lossProbes();
    const ng = await wrk(`${ngBase}${prefix}/0`, script, duration);
    ng.lossProbes = (await lossProbes()) - ngProbes;
    await wrk(`${gwBase}${prefix}/0`, script, warmup);
    const hit = await fetch(`${gwBase}${prefix}/0`);
    if (hit.headers.get('x-cache') !== 'HIT') throw new Error('the gateway did not cache the chunks');
    await hit.arrayBuffer();
    const loop = inProcess ? monitorEventLoopDelay({ resolution: 1 }) : undefined;
    loop?.enable();
    const gwProbes = await lossProbes();
    const gw = await wrk(`${gwBase}${prefix}/0`, script, duration);
    loop?.disable();
    gw.lossProbes = (await lossProbes()) - gwProbes;
    gw.loopDelay = loop ? `${ms(loop.percentile(99))} / ${ms(loop.max)}` : 'n/a (other processes)';
    results[workload] = { gw, ng };
    const goal = workload === 'full' ? 0.7 : 0.5;
    const ratio = gw.rps / ng.rps;
    rows.push(
      `| ${workload === 'full' ? 'full GET 256 KiB (cache hit)' : 'Range GET 64 KiB (206)'} | ${fmt(gw.rps)} | ${fmt(ng.rps)} | ${(ratio * 100).toFixed(0)} % (goal ≥ ${goal * 100} %) | ${gw.p50} / ${gw.p99} | ${ng.p50} / ${ng.p99} | ${gw.loopDelay} | ${gw.lossProbes} / ${ng.lossProbes} | ${gw.errors + ng.errors} |`,
    );
  }
  console.log(
    `\nGateway (${workers} process${workers > 1 ? 'es' : ''}) vs nginx (${nginxWorkers} worker${nginxWorkers > 1 ? 's' : ''}): ${connections} connections, ${warmup} s warm-up then ${duration} s a run, wrk 1 thread, ${nChunks} chunks of 256 KiB, loopback`,
  );
  console.log('| workload | gateway req/s | nginx req/s | gateway / nginx | gateway p50 / p99 | nginx p50 / p99 | gateway event-loop delay p99 / max | TCP loss probes gateway / nginx | errors |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(JSON.stringify(results));
} finally {
  nginx?.kill('SIGTERM');
  await inProcess?.close();
  if (command && command.exitCode === null) {
    const exited = new Promise((r) => command!.once('exit', r));
    command.kill('SIGTERM');
    await exited;
  }
  if (seeding) await closeDeps(seeding);
  await dropDatabase?.();
  await rm(work, { recursive: true, force: true });
}

interface WrkResult {
  rps: number;
  p50: string;
  p99: string;
  errors: number;
  lossProbes?: number;
  loopDelay?: string;
}

/** Asynchronous: an in-process gateway under test runs on this process's event loop. */
async function wrk(url: string, script: string, seconds: number): Promise<WrkResult> {
  const { stdout: out } = await promisify(execFile)('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p50 = /\s50%\s+(\S+)/.exec(out)?.[1] ?? '?';
  const p99 = /\s99%\s+(\S+)/.exec(out)?.[1] ?? '?';
  const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors:.*?timeout (\d+)/.exec(out)?.[1] ?? 0);
  return { rps, p50, p99, errors };
}

/** `nds gateway` as a command (GATEWAY_WORKERS > 1), resolved once every worker listens. */
async function startCommand(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [resolve('bin/nds.js'), 'gateway'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((ok, fail) => {
    let text = '';
    child.stderr!.on('data', (c: Buffer) => {
      text += c.toString();
      if (/listening on port \d+/.test(text)) ok();
    });
    child.once('exit', () => fail(new Error(`nds gateway exited: ${text}`)));
  });
  return child;
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Linux's count of TCP tail-loss probes sent (all sockets of the machine), NaN elsewhere. */
async function lossProbes(): Promise<number> {
  try {
    const lines = (await readFile('/proc/net/netstat', 'utf8')).split('\n').filter((l) => l.startsWith('TcpExt:'));
    const names = lines[0]!.split(/\s+/);
    const values = lines[1]!.split(/\s+/);
    return Number(values[names.indexOf('TCPLossProbes')]);
  } catch {
    return NaN;
  }
}

function ms(ns: number): string {
  return `${(ns / 1e6).toFixed(1)} ms`;
}

/** Rotates over the chunks; the range workload asks a different 64 KiB window each time. */
function luaScript(workload: 'full' | 'range'): string {
  return `
local i = 0
request = function()
  i = i + 1
  local path = "${prefix}/" .. (i % ${nChunks})
  local headers = { ["Origin"] = "http://localhost:5173" }
  ${workload === 'range' ? `local start = (i * 4096) % ${CHUNK - RANGE}
  headers["Range"] = "bytes=" .. start .. "-" .. (start + ${RANGE - 1})` : ''}
  return wrk.format("GET", path, headers)
end
`;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function waitForUp(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nginx did not start at ${url}`);
}
