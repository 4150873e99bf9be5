/**
 * Gateway benchmark: `nds gateway` (in this process, folder store, PGlite) against nginx serving the same
 * files from disk, both on loopback, loaded by wrk with 64 connections. Two workloads: full GETs of 256 KiB
 * chunks (the gateway answers from its cache) and 64 KiB Range GETs of the same chunks (206).
 * Goals: ≥ 70 % of nginx's req/s on cache hits, ≥ 50 % on ranges, p99 < 20 ms.
 * Run: node --import tsx bench/gateway.ts [--duration 5] [--chunks 16] [--connections 64]
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUser } from '../src/accounts/users.js';
import { loadConfig } from '../src/config.js';
import { startGatewayServer } from '../src/gateway/gateway-server.js';
import { createLogger } from '../src/log.js';
import { freePort } from '../test/support/test-server.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const duration = Number(option('duration', '5'));
const nChunks = Number(option('chunks', '16'));
const connections = Number(option('connections', '64'));
const CHUNK = 256 * 1024;
const RANGE = 64 * 1024;
const id = 'nd900001';
const prefix = `/${id}/zarr/bench.zarr/eeg_1000hz/0/c/0`;

const work = await mkdtemp(join(tmpdir(), 'nds-bench-gw-'));
const objectsDir = join(work, 'objects');
// nginx's worker runs as an unprivileged user when started by root: it must be able to read the files.
await chmod(work, 0o755);
let nginx: ReturnType<typeof spawn> | undefined;
let gateway: Awaited<ReturnType<typeof startGatewayServer>> | undefined;
try {
  const gwPort = await freePort();
  const config = loadConfig({ PORT: String(gwPort), DATA_DIR: work, DATABASE_URL: 'pglite:memory', OBJECT_STORE_URL: `file:${objectsDir}`, LOG_LEVEL: 'warn' });
  gateway = await startGatewayServer({ config, hostname: '127.0.0.1', log: createLogger('warn') });
  const { db, objects } = gateway.deps;
  const owner = await createUser(db, { username: 'bench-owner', email: 'bench@example.org', status: 'approved', role: 'member', kind: 'person' });
  await db
    .insertInto('datasets')
    .values({ id, name: 'bench', owner_id: owner.id, visibility: 'public', source_repo: null, latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: 'ready', zarr_converted_at: null, zarr_store_count: 1, zarr_index_etag: null, zarr_source_commit: null })
    .execute();
  for (let i = 0; i < nChunks; i++) {
    const body = Buffer.alloc(CHUNK);
    for (let j = 0; j < CHUNK; j += 4) body.writeUInt32LE((i * 7919 + j) >>> 0, j);
    await objects.put(`${prefix.slice(1)}/${i}`, body);
  }

  const ngPort = await freePort();
  await writeFile(
    join(work, 'nginx.conf'),
    `daemon off;
worker_processes 1;
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
  const hit = await fetch(`${gwBase}${prefix}/0`);
  if (hit.headers.get('x-cache') !== 'HIT') throw new Error('the gateway did not cache the chunks');

  const rows: string[] = [];
  const results: Record<string, { gw: WrkResult; ng: WrkResult }> = {};
  for (const workload of ['full', 'range'] as const) {
    const script = join(work, `${workload}.lua`);
    await writeFile(script, luaScript(workload));
    const ng = await wrk(`${ngBase}${prefix}/0`, script);
    const gw = await wrk(`${gwBase}${prefix}/0`, script);
    results[workload] = { gw, ng };
    const goal = workload === 'full' ? 0.7 : 0.5;
    const ratio = gw.rps / ng.rps;
    rows.push(
      `| ${workload === 'full' ? 'full GET 256 KiB (cache hit)' : 'Range GET 64 KiB (206)'} | ${fmt(gw.rps)} | ${fmt(ng.rps)} | ${(ratio * 100).toFixed(0)} % (goal ≥ ${goal * 100} %) | ${gw.p50} / ${gw.p99} | ${ng.p50} / ${ng.p99} | ${gw.errors + ng.errors} |`,
    );
  }
  console.log(`\nGateway vs nginx: ${connections} connections, ${duration} s a run, wrk 1 thread, ${nChunks} chunks of 256 KiB, loopback`);
  console.log('| workload | gateway req/s | nginx req/s | gateway / nginx | gateway p50 / p99 | nginx p50 / p99 | errors |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  console.log(JSON.stringify(results));
} finally {
  nginx?.kill('SIGTERM');
  await gateway?.close();
  await rm(work, { recursive: true, force: true });
}

interface WrkResult {
  rps: number;
  p50: string;
  p99: string;
  errors: number;
}

/** Asynchronous: the gateway under test runs on this process's event loop. */
async function wrk(url: string, script: string): Promise<WrkResult> {
  const { stdout: out } = await promisify(execFile)('wrk', ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p50 = /\s50%\s+(\S+)/.exec(out)?.[1] ?? '?';
  const p99 = /\s99%\s+(\S+)/.exec(out)?.[1] ?? '?';
  const errors = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors:.*?timeout (\d+)/.exec(out)?.[1] ?? 0);
  return { rps, p50, p99, errors };
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
