/**
 * The MCP server's read_window against the signal route it equals (issue 25): a synthetic 64-channel 256 Hz
 * EDF converted into a public dataset on an in-process server, then, warm, 1,000,000 channel-samples (64 × 15,625)
 * at random starts read alternately
 *   - through streamable HTTP with the SDK's own client (`read_window`, format npy: base64 in JSON-RPC), and
 *   - from `GET /datasets/:id/signal` (`.npy`, the baseline),
 *   - and, for scale, the JSON-RPC envelope alone: the same bytes to base64, stringified, parsed, checked with
 *     `atob` (as the SDK does on each side) and decoded, without a server,
 * each timed from the call to the decoded bytes in hand; p50 and p95 of each, their ratio, and the server
 * process's minor page faults a window (Linux; fresh memory written, which no load changes). Client and
 * server share this process and its thread. Goal: read_window p95 ≤ 150 ms.
 * Then the same windows again with `nds serve` in a process of its own (as agents meet it), on the same database.
 * With NDS_BENCH_MCP_BASELINE=<another checkout> (its own node_modules), that checkout's `nds serve` runs beside
 * this one's, on a copy of the database, and each window is read from both in turn: before and after a change in
 * one run.
 * Run: npm run bench -- mcp   (NDS_BENCH_MCP_N: windows of each kind, default 60; NDS_BENCH_SERVE_NODE_OPTIONS:
 *      Node.js flags of that `nds serve`, e.g. --cpu-prof)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createAccount } from '../test/support/accounts.js';
import { freePort, startTestServer } from '../test/support/test-server.js';
import { publishDataset } from '../test/web/viewer-support.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';

const n = Number(process.env.NDS_BENCH_MCP_N ?? 60);
const baseline = process.env.NDS_BENCH_MCP_BASELINE;
const seconds = 120;
const samples = 15_625;
const id = 'nd000925';
const work = await mkdtemp(join(tmpdir(), 'nds-bench-mcp-'));
const server = await startTestServer({ env: { DATABASE_URL: `pglite:${join(work, 'db')}`, OBJECT_STORE_URL: `file:${join(work, 'objects')}` } });
const client = new Client({ name: 'nds-bench', version: '1.0.0' });
const serving: Array<{ url: string; child: ChildProcess }> = [];
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const line = (name: string, xs: number[]) => `${name.padEnd(34)} p50 ${percentile(xs, 50).toFixed(1).padStart(6)} ms   p95 ${percentile(xs, 95).toFixed(1).padStart(6)} ms`;
try {
  const bids = join(work, 'bids');
  const path = 'sub-01/eeg/sub-01_task-bench_eeg.edf';
  mkdirSync(join(bids, 'sub-01/eeg'), { recursive: true });
  await writeSyntheticRecording({ path: join(bids, path), bdf: false, channels: 64, rate: 256, bytes: 256 * 65 + 64 * 256 * 2 * seconds });
  writeFileSync(join(bids, 'dataset_description.json'), '{"Name":"mcp bench","BIDSVersion":"1.9.0"}');
  const owner = await createAccount(server);
  await publishDataset(server, { id, ownerId: owner.user.id, name: 'MCP bench', recordings: [{ file: join(bids, path), bidsRoot: bids, path, zarr: path.replace(/\.\w+$/, '.zarr') }] });
  const starts = Array.from({ length: n }, () => Math.floor(Math.random() * (seconds * 256 - samples)));
  const [inProcess] = await measure([{ url: server.url, client, pid: process.pid }], path, starts);
  // As agents meet nds: `nds serve` in a process of its own, on the same database and store, so the server's
  // half of each call (reading, base64, the SDK's check of the answer, JSON) and the client's half (parsing,
  // the SDK's check again, decoding) no longer share one thread and one heap.
  await client.close();
  await server.close();
  // A PGlite database is one process's: the baseline reads a copy of it (the store's files are only read).
  if (baseline) cpSync(join(work, 'db'), join(work, 'db-baseline'), { recursive: true });
  serving.push(await serveInProcessOfItsOwn(work, '.', 'db'));
  if (baseline) serving.push(await serveInProcessOfItsOwn(work, baseline, 'db-baseline'));
  const separate = await measure(serving.map((s) => ({ url: s.url, client: new Client({ name: 'nds-bench', version: '1.0.0' }), pid: serverPid(s.child) })), path, starts);
  console.log(`load average ${loadavg()[0]!.toFixed(1)}; Node ${process.version}; ${n} windows of 64 × ${samples} float32 (${((64 * samples * 4) / 2 ** 20).toFixed(1)} MiB) at random starts, warm`);
  const runs = [['client and server in one process', inProcess!], ['nds serve in its own process', separate[0]!]] as Array<[string, Measured]>;
  if (baseline) runs.push([`nds serve of ${baseline} (the baseline, read in turn with the one above)`, separate[1]!]);
  for (const [where, m] of runs) {
    console.log(`-- ${where}`);
    console.log(line('read_window (MCP, npy, base64)', m.mcp));
    console.log(line('GET /datasets/:id/signal (npy)', m.route));
    console.log(line('the envelope alone (no server)', m.floor));
    if (m.faults) console.log(`minor page faults of the server process a window: read_window ${m.faults.mcp.toFixed(0)}, signal route ${m.faults.route.toFixed(0)}`);
    console.log(`ratio MCP / route: p50 ${(percentile(m.mcp, 50) / percentile(m.route, 50)).toFixed(2)}, p95 ${(percentile(m.mcp, 95) / percentile(m.route, 95)).toFixed(2)}; goal p95 ≤ 150 ms: ${percentile(m.mcp, 95) <= 150 ? 'met' : 'missed'}`);
  }
  if (baseline) console.log(`read_window p50 / p95, this checkout ÷ baseline: ${(percentile(separate[0]!.mcp, 50) / percentile(separate[1]!.mcp, 50)).toFixed(2)} / ${(percentile(separate[0]!.mcp, 95) / percentile(separate[1]!.mcp, 95)).toFixed(2)}`);
} finally {
  await client.close().catch(() => undefined);
  await server.close().catch(() => undefined);
  for (const s of serving) {
    s.child.kill('SIGTERM');
    await once(s.child, 'exit');
  }
  await rm(work, { recursive: true, force: true });
}

type Measured = { mcp: number[]; route: number[]; floor: number[]; faults?: { mcp: number; route: number } };

/** Minor page faults of a process so far (Linux), or undefined: the first write to fresh memory costs one a page. */
function minorFaults(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined;
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[7]);
}

/** The server process of a launched `nds serve` (bin/serve-launcher.js starts it as the launcher's child). */
function serverPid(launcher: ChildProcess): number | undefined {
  const children = `/proc/${launcher.pid}/task/${launcher.pid}/children`;
  const first = existsSync(children) ? Number(readFileSync(children, 'utf8').trim().split(' ')[0]) : NaN;
  return Number.isInteger(first) && first > 0 ? first : launcher.pid;
}

/** Each window read from every server in turn (its MCP answer, then its signal route), then the envelope alone. */
async function measure(targets: Array<{ url: string; client: Client; pid?: number | undefined }>, path: string, starts: number[]): Promise<Measured[]> {
  for (const t of targets) await t.client.connect(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
  const viaMcp = async ({ client: mcpClient }: { client: Client }, start: number): Promise<number> => {
    const result = (await mcpClient.callTool({ name: 'read_window', arguments: { dataset_id: id, path, start_sample: start, n_samples: samples, format: 'npy' } })) as CallToolResult;
    const resource = result.content.find((c) => c.type === 'resource');
    if (!resource || resource.type !== 'resource' || !('blob' in resource.resource)) throw new Error(`read_window: ${JSON.stringify(result.content).slice(0, 300)}`);
    return Buffer.from(resource.resource.blob, 'base64').byteLength;
  };
  const viaRoute = async ({ url }: { url: string }, start: number): Promise<number> => {
    const res = await fetch(`${url}/datasets/${id}/signal?path=${encodeURIComponent(path)}&start_sample=${start}&n_samples=${samples}&format=npy`);
    if (res.status !== 200) throw new Error(`signal: ${res.status} ${await res.text()}`);
    return (await res.arrayBuffer()).byteLength;
  };
  // Warm: every chunk decoded once and the code compiled, so the figures are of warm reads.
  for (const start of starts.slice(0, 10)) {
    for (const t of targets) {
      const [a, b] = [await viaMcp(t, start), await viaRoute(t, start)];
      if (a !== b) throw new Error(`read_window answered ${a} bytes, the signal route ${b}`);
    }
  }
  const envelope = async (): Promise<number> => {
    const blob = Buffer.alloc(64 * samples * 4 + 128, 7).toString('base64');
    const text = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'resource', resource: { uri: 'x', blob } }] } });
    const parsed = JSON.parse(text) as { result: { content: Array<{ resource: { blob: string } }> } };
    atob(parsed.result.content[0]!.resource.blob);
    return Buffer.from(parsed.result.content[0]!.resource.blob, 'base64').byteLength;
  };
  const faults = targets.map(() => ({ mcp: 0, route: 0 }));
  const time = async (into: number[], run: () => Promise<number>, pid?: number, count?: (n: number) => void) => {
    const f0 = minorFaults(pid);
    const t0 = performance.now();
    await run();
    into.push(performance.now() - t0);
    const f1 = minorFaults(pid);
    if (f0 !== undefined && f1 !== undefined) count?.(f1 - f0);
  };
  const ms = targets.map(() => ({ mcp: [] as number[], route: [] as number[], floor: [] as number[] }));
  const floor: number[] = [];
  for (const start of starts) {
    for (const [i, t] of targets.entries()) {
      await time(ms[i]!.mcp, () => viaMcp(t, start), t.pid, (n) => (faults[i]!.mcp += n));
      await time(ms[i]!.route, () => viaRoute(t, start), t.pid, (n) => (faults[i]!.route += n));
    }
    await time(floor, envelope);
  }
  for (const t of targets) await t.client.close();
  return ms.map((m, i) => ({ ...m, floor, ...(targets[i]!.pid !== undefined ? { faults: { mcp: faults[i]!.mcp / starts.length, route: faults[i]!.route / starts.length } } : {}) }));
}

/** `nds serve` (`checkout`'s bin/nds.js) on the bench's database `db` and store, in a child process; resolves once it answers. */
async function serveInProcessOfItsOwn(folder: string, checkout: string, db: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [join(checkout, 'bin/nds.js'), 'serve'], {
    env: { ...process.env, PORT: String(port), PUBLIC_URL: url, DATA_DIR: join(folder, `serve-${db}`), DATABASE_URL: `pglite:${join(folder, db)}`, OBJECT_STORE_URL: `file:${join(folder, 'objects')}`, LOG_LEVEL: 'warn', NODE_OPTIONS: process.env.NDS_BENCH_SERVE_NODE_OPTIONS ?? '' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`nds serve exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('nds serve did not answer within 60 s');
}
