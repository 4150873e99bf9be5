/**
 * Authentication overhead: the real server (`nds serve`, embedded PGlite) under autocannon, 64 connections,
 * 10 s a route: the bare `/healthz` beside `GET /users/me` with a bearer key. Goal: the authenticated route
 * keeps at least 50% of the bare route's req/s, with p99 under 10 ms.
 * Run: node --import tsx bench/auth.ts [--seconds 10] [--connections 64]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/test-server.js';
import { option } from './bench-args.js';

interface Result {
  requests: { average: number; total: number };
  latency: { p99: number; average: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (options: { url: string; connections: number; duration: number; headers?: Record<string, string> }) => Promise<Result>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const seconds = Number(option('seconds', '10'));
const connections = Number(option('connections', '64'));

const dataDir = await mkdtemp(join(tmpdir(), 'nds-bench-auth-'));
const port = await freePort();
const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', IN_PROCESS_WORKER: 'false' };
const cli = ['bin/nds.js'];

const bootstrap = spawnSync(process.execPath, [...cli, 'admin', 'bootstrap', '--username', 'bench', '--email', 'bench@example.org'], { env, encoding: 'utf8' });
if (bootstrap.status !== 0) throw new Error(`bootstrap failed: ${bootstrap.stderr}`);
const key = bootstrap.stdout.trim().split('\n').pop()!;

let server: ChildProcess | undefined;
try {
  server = spawn(process.execPath, [...cli, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    server!.stderr!.on('data', (d) => {
      err += d;
      if (err.includes('listening')) resolve();
    });
    server!.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${key}` };
  const me = await fetch(`${base}/users/me`, { headers: auth });
  if (me.status !== 200) throw new Error(`GET /users/me answered ${me.status}`);

  const run = (path: string, headers?: Record<string, string>, duration = seconds) => autocannon({ url: `${base}${path}`, connections, duration, headers });
  // Warm both paths (JIT, connection pool, the key's last_used_at write) before measuring.
  await run('/healthz', undefined, 2);
  await run('/users/me', auth, 2);
  const bare = await run('/healthz');
  const authed = await run('/users/me', auth);
  for (const [name, r] of [['bare', bare], ['authenticated', authed]] as const) {
    if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  }

  const ratio = authed.requests.average / bare.requests.average;
  const rows = [
    ['route', 'req/s', 'p99 ms', 'avg ms'],
    ['GET /healthz (bare)', bare.requests.average.toFixed(0), String(bare.latency.p99), bare.latency.average.toFixed(2)],
    ['GET /users/me (bearer key)', authed.requests.average.toFixed(0), String(authed.latency.p99), authed.latency.average.toFixed(2)],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => (i ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  '));
  console.log(`authenticated / bare req/s: ${(ratio * 100).toFixed(1)}% (goal ≥ 50%); authenticated p99 ${authed.latency.p99} ms (goal < 10 ms)`);
  console.log(`${connections} connections, ${seconds} s each, ${cpus().length} cores, server and load generator on the same machine`);
  if (ratio < 0.5 || authed.latency.p99 >= 10) process.exitCode = 1;
} finally {
  server?.kill('SIGTERM');
  await new Promise((r) => server?.once('exit', r) ?? r(undefined));
  await rm(dataDir, { recursive: true, force: true });
}
