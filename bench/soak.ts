/**
 * Soak: the real server (`nds serve`, embedded PGlite, folder store, as a child process) under a mixed load
 * from 16 clients for 5 minutes: authenticated reads, dataset writes, gateway chunks and ranges, device
 * sign-in starts. Reports throughput and p99 per kind of request, and the server's resident memory
 * (`/proc/<pid>/status`) every 10 s. Baseline, in the same run and from the same clients: the bare
 * `/healthz` route. Goal: RSS flat within 10 % after the first minute (max over min of the later samples).
 *
 * Each client sends from its own loopback address (127.0.0.<10+n>), as separate machines would, so that the
 * per-IP limit of device starts (30 a minute) is met per client; starts are paced below it.
 * Run: node --import tsx bench/soak.ts [--clients 16] [--baseline-seconds 20]   (SOAK_SECONDS=300)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { rssBytes, servingPid } from '../test/support/processes.js';
import { freePort } from '../test/support/test-server.js';
import { option } from './bench-args.js';

const soakSeconds = Number(process.env.SOAK_SECONDS ?? option('seconds', '300'));
const clients = Number(option('clients', '16'));
const baselineSeconds = Number(option('baseline-seconds', String(Math.min(20, Math.max(5, Math.round(soakSeconds / 10))))));
const SAMPLE_MS = 10_000;
const CHUNK = 64 * 1024;
const N_CHUNKS = 32;
/** Device starts a client makes at most: under the 30 a minute an IP may make. */
const DEVICE_START_EVERY_MS = 2500;

type Kind = 'healthz' | 'read' | 'write' | 'create' | 'chunk' | 'range' | 'device';

interface Call {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

interface Tally {
  latencies: number[];
  ok: number;
  refused: number;
  failed: number;
}

const dataDir = await mkdtemp(join(tmpdir(), 'nds-bench-soak-'));
const port = await freePort();
const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', IN_PROCESS_WORKER: 'false', HOST: '0.0.0.0' };
const cli = ['bin/nds.js'];
let server: ChildProcess | undefined;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

try {
  const bootstrap = spawnSync(process.execPath, [...cli, 'admin', 'bootstrap', '--username', 'soak', '--email', 'soak@example.org'], { env, encoding: 'utf8' });
  if (bootstrap.status !== 0) throw new Error(`bootstrap failed: ${bootstrap.stderr}`);
  const key = bootstrap.stdout.trim().split('\n').pop()!;

  server = spawn(process.execPath, [...cli, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    server!.stderr!.on('data', (d) => {
      err += d;
      if (err.includes('listening')) resolve();
    });
    server!.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
  });
  const pid = servingPid(server.pid!);
  const base = `http://127.0.0.1:${port}`;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  // Datasets to read and write, one public with a Zarr copy for the gateway (written into the folder store).
  const created: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await fetch(`${base}/datasets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `Soak ${i}`, visibility: 'public', description: 'soak' }) });
    if (res.status !== 201) throw new Error(`POST /datasets answered ${res.status}: ${await res.text()}`);
    created.push(((await res.json()) as { id: string }).id);
  }
  const zarrId = created[0]!;
  const chunkKey = (n: number) => `${zarrId}/zarr/soak.zarr/eeg_1000hz/0/c/0/${n}`;
  for (let n = 0; n < N_CHUNKS; n++) {
    const file = join(dataDir, 'objects', chunkKey(n));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, Buffer.alloc(CHUNK, n));
  }

  let sequence = 0;
  const pick = <T>(items: readonly T[]): T => items[sequence++ % items.length]!;
  const callOf = (kind: Kind): Call => {
    const id = pick(created);
    switch (kind) {
      case 'healthz': return { method: 'GET', path: '/healthz' };
      case 'read': return pick<Call>([{ method: 'GET', path: `/datasets/${id}`, headers: auth }, { method: 'GET', path: '/users/me', headers: auth }, { method: 'GET', path: '/datasets?limit=20', headers: auth }]);
      case 'write': return { method: 'PATCH', path: `/datasets/${id}`, headers: auth, body: JSON.stringify({ description: `soak ${sequence}`, keywords: ['soak', String(sequence % 97)] }) };
      case 'create': return { method: 'POST', path: '/datasets', headers: auth, body: JSON.stringify({ name: `Soak extra ${sequence}`, visibility: 'private' }) };
      case 'chunk': return { method: 'GET', path: `/zarrproxy/${chunkKey(sequence % N_CHUNKS)}` };
      case 'range': {
        const start = (sequence * 4099) % (CHUNK - 8192);
        return { method: 'GET', path: `/zarrproxy/${chunkKey(sequence % N_CHUNKS)}`, headers: { range: `bytes=${start}-${start + 8191}` } };
      }
      case 'device': return { method: 'POST', path: '/auth/device/start', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ machine_name: 'soak' }) };
    }
  };
  // The mix, by share of requests: reads 35 %, writes 13 %, creates 2 %, chunks 28 %, ranges 22 % (device starts paced apart).
  const mix: Kind[] = [...Array(35).fill('read'), ...Array(13).fill('write'), ...Array(2).fill('create'), ...Array(28).fill('chunk'), ...Array(22).fill('range')];

  const send = (agent: Agent, localAddress: string, call: Call): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: call.method, path: call.path, headers: call.body ? { ...call.headers, 'content-length': String(Buffer.byteLength(call.body)) } : call.headers, agent, localAddress }, (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(call.body);
    });

  /** Runs `clients` loops for `seconds`, each choosing the next kind with `choose`; calls `tick` every 10 s. */
  async function load(seconds: number, choose: (client: number, i: number, now: number) => Kind, tick?: (elapsedS: number) => Promise<void>): Promise<Map<Kind, Tally>> {
    const tallies = new Map<Kind, Tally>();
    const tally = (k: Kind) => tallies.get(k) ?? (tallies.set(k, { latencies: [], ok: 0, refused: 0, failed: 0 }), tallies.get(k)!);
    const started = performance.now();
    const end = started + seconds * 1000;
    let ticker: NodeJS.Timeout | undefined;
    let ticks = 0;
    if (tick) ticker = setInterval(() => void tick(++ticks * (SAMPLE_MS / 1000)), SAMPLE_MS);
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        const localAddress = `127.0.0.${10 + client}`;
        for (let i = 0; performance.now() < end; i++) {
          const kind = choose(client, i, performance.now());
          const t0 = performance.now();
          try {
            const status = await send(agent, localAddress, callOf(kind));
            const t = tally(kind);
            t.latencies.push(performance.now() - t0);
            if (status >= 500) t.failed++;
            else if (status >= 400) t.refused++;
            else t.ok++;
          } catch {
            tally(kind).failed++;
          }
        }
        agent.destroy();
      }),
    );
    if (ticker) clearInterval(ticker);
    return tallies;
  }

  const report = (title: string, tallies: Map<Kind, Tally>, seconds: number) => {
    console.log(title);
    const rows = [['kind', 'requests', 'req/s', 'p50 ms', 'p99 ms', '4xx', '5xx/errors']];
    let total = 0;
    for (const [kind, t] of [...tallies].sort()) {
      const sorted = t.latencies.sort((a, b) => a - b);
      const n = t.ok + t.refused + t.failed;
      total += n;
      rows.push([kind, String(n), (n / seconds).toFixed(0), percentile(sorted, 50).toFixed(1), percentile(sorted, 99).toFixed(1), String(t.refused), String(t.failed)]);
    }
    const all = [...tallies.values()].flatMap((t) => t.latencies).sort((a, b) => a - b);
    rows.push(['all', String(total), (total / seconds).toFixed(0), percentile(all, 50).toFixed(1), percentile(all, 99).toFixed(1), '', '']);
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const r of rows) console.log('  ' + r.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  '));
  };

  console.log(`soak: ${clients} clients, baseline ${baselineSeconds} s, mix ${soakSeconds} s; ${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} at start`);
  // Warm-up: JIT, the connection pool, the gateway's cache.
  await load(3, (_, i) => (i % 2 ? 'chunk' : 'read'));
  const baseline = await load(baselineSeconds, () => 'healthz');
  report(`baseline: GET /healthz, ${baselineSeconds} s`, baseline, baselineSeconds);

  const samples: Array<{ s: number; rss: number; requests: number }> = [{ s: 0, rss: rssBytes(pid), requests: 0 }];
  console.log(`  rss at start of the mix: ${(samples[0]!.rss / 2 ** 20).toFixed(1)} MiB`);
  // RSS is also read every second, for the low and high of each 10 s: a garbage-collected heap rises to its next
  // collection and falls back, so a leak shows in the lows climbing, not in one sample being high.
  const fine: Array<{ s: number; rss: number }> = [];
  const mixStarted = performance.now();
  const fineSampler = setInterval(() => fine.push({ s: (performance.now() - mixStarted) / 1000, rss: rssBytes(pid) }), 1000);
  let requests = 0;
  const lastDevice = new Map<number, number>();
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  const soak = await load(
    soakSeconds,
    (client, i, now) => {
      requests++;
      if (now - (lastDevice.get(client) ?? -Infinity) >= DEVICE_START_EVERY_MS) {
        lastDevice.set(client, now);
        return 'device';
      }
      return mix[(i * 37 + client * 11) % mix.length]!;
    },
    async (s) => {
      const rss = rssBytes(pid);
      const previous = samples[samples.length - 1]!;
      samples.push({ s, rss, requests });
      const window = fine.filter((x) => x.s > previous.s && x.s <= s).map((x) => x.rss);
      const range = window.length ? `  (last 10 s: ${mib(Math.min(...window))}–${mib(Math.max(...window))})` : '';
      console.log(`  t=${String(s).padStart(4)} s  rss ${mib(rss).padStart(7)} MiB${range}  ${((requests - previous.requests) / (s - previous.s)).toFixed(0).padStart(6)} req/s`);
    },
  );
  clearInterval(fineSampler);
  report(`mix: ${soakSeconds} s`, soak, soakSeconds);

  // Flatness over the samples after the first minute (after the first fifth when the run is shorter).
  const settle = soakSeconds >= 120 ? 60 : Math.round(soakSeconds / 5);
  const later = samples.filter((x) => x.s >= settle).map((x) => x.rss);
  if (later.length >= 2) {
    const spread = Math.max(...later) / Math.min(...later) - 1;
    console.log(`rss after ${settle} s (10 s samples): ${mib(Math.min(...later))}–${mib(Math.max(...later))} MiB, spread ${(spread * 100).toFixed(1)} % (goal ≤ 10 %); first to last ${(((later[later.length - 1]! / later[0]!) - 1) * 100).toFixed(1)} %`);
    // The low of each minute (each fifth of a shorter run): what stays after the heap's collections.
    const span = soakSeconds >= 120 ? 60 : Math.max(1, Math.round(soakSeconds / 5));
    const lows: number[] = [];
    for (let from = settle; from < soakSeconds; from += span) {
      const part = fine.filter((x) => x.s >= from && x.s < from + span).map((x) => x.rss);
      if (part.length) lows.push(Math.min(...part));
    }
    if (lows.length >= 2) console.log(`rss low of each ${span} s after ${settle} s: ${lows.map(mib).join(', ')} MiB; last over first ${(((lows[lows.length - 1]! / lows[0]!) - 1) * 100).toFixed(1)} %`);
    if (spread > 0.1) process.exitCode = 1;
  } else console.log('rss: too few samples after the settling time to judge flatness (run longer)');
  const failures = [...soak.values()].reduce((n, t) => n + t.failed, 0);
  if (failures > 0) {
    console.log(`${failures} requests failed (5xx or connection errors)`);
    process.exitCode = 1;
  }
  console.log(`load average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}; server and load generator on the same machine`);
} finally {
  server?.kill('SIGTERM');
  await new Promise((r) => (server && server.exitCode === null ? server.once('exit', r) : r(undefined)));
  await rm(dataDir, { recursive: true, force: true });
}
