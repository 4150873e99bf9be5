/**
 * `nds gateway` with GATEWAY_WORKERS=2, as a real command: two worker processes on one port, each with its
 * own cache, a purge received by one reaching the other, and a clean stop. Several workers need PostgreSQL
 * (PGlite is one process's database), so this file runs with NDS_TEST_DB=postgres only.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { freePort, startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, rawRequest, STORE } from './support.js';

const TOKEN = 'edge-token-for-tests-0123456789';
const chunkPath = `${STORE}/eeg_250hz/0/c/0/0`;

describe('nds gateway on two workers', { skip: usingPostgres ? false : 'needs PostgreSQL (NDS_TEST_DB=postgres)' }, () => {
  let api: TestServer;
  let gateway: ChildProcess;
  let dataDir: string;
  let base: string;
  let metricsBase: string;
  let id: string;
  let exited: Promise<number | null>;

  before(async () => {
    // The API server makes the database and the folder store; the gateway command reads both.
    api = await startTestServer();
    id = newDatasetId();
    await insertDataset(api.deps.db, id);
    await putZarrCopy(api.deps.objects, id);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'nds-gw-cluster-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const metricsPort = await freePort();
    metricsBase = `http://127.0.0.1:${metricsPort}`;
    const env = {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: api.config.databaseUrl,
      OBJECT_STORE_URL: api.config.objectStoreUrl,
      GATEWAY_WORKERS: '2',
      METRICS_PORT: String(metricsPort),
      EDGE_API_TOKEN: TOKEN,
      EDGE_ZONE_ID: 'zone1',
      LOG_LEVEL: 'warn',
      CACHE_REDIS_URL: '',
    };
    gateway = spawn(process.execPath, [path.resolve('bin/nds.js'), 'gateway'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    exited = new Promise((resolve) => gateway.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      let text = '';
      gateway.stderr!.on('data', (c: Buffer) => {
        text += c.toString();
        if (/listening on port \d+ \(2 workers\)/.test(text)) resolve();
      });
      gateway.once('exit', () => reject(new Error(`nds gateway exited: ${text}`)));
    });
  });
  after(async () => {
    if (gateway && gateway.exitCode === null) gateway.kill('SIGTERM');
    await exited;
    await api?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** The worker processes: children running nds (the primary may also have an esbuild helper). */
  const workerPids = async () => {
    const { stdout } = await promisify(execFile)('ps', ['--ppid', String(gateway.pid), '-o', 'pid=,args=']);
    return stdout.split('\n').filter((l) => l.includes('nds.js')).map((l) => Number(l.trim().split(/\s+/)[0]));
  };

  /** A request on a new connection: the primary hands connections to the workers in turn. */
  const fresh = (target: string, options: Parameters<typeof rawRequest>[2] = {}) =>
    rawRequest(base, target, { ...options, headers: { connection: 'close', ...options.headers } });
  const misses = async (n: number) => {
    let count = 0;
    for (let i = 0; i < n; i++) {
      const r = await fresh(`/${id}/zarr/${chunkPath}`);
      assert.equal(r.status, 200);
      if (r.headers['x-cache'] === 'MISS') count++;
    }
    return count;
  };

  it('runs two worker processes, each with its own cache', async () => {
    assert.equal((await workerPids()).length, 2);
    // Six connections, taken in turn: each worker misses once, then hits.
    assert.equal(await misses(6), 2);
  });

  it('relays a purge received by one worker to the other', async () => {
    const res = await fresh('/edge/zones/zone1/purge_cache', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prefixes: [`127.0.0.1/${id}/zarr/`] }),
    });
    assert.equal(res.status, 200);
    // Without the relay only the worker that took the purge would miss again.
    assert.equal(await misses(6), 2);
  });

  it('answers /metrics on METRICS_PORT with the sum over both workers, whichever worker is asked, naming no dataset', async () => {
    // Without METRICS_TOKEN the gateway's own port, which the public reaches through a proxy, answers nobody.
    assert.equal((await fresh('/metrics')).status, 403);
    // Both workers answered chunk requests above (each had its own miss); every hit and miss so far is counted.
    const answered = async () => {
      const r = await rawRequest(metricsBase, '/metrics', { headers: { connection: 'close' } });
      assert.equal(r.status, 200);
      const text = r.body.toString();
      assert.ok(!text.includes(id), 'no dataset id in the metrics');
      const count = (verdict: string) => Number(new RegExp(`^nds_gateway_answers_total\\{cache="${verdict}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      const pools = Number(/^nds_db_pool_max (\d+)$/m.exec(text)?.[1]);
      return { total: count('HIT') + count('MISS'), misses: count('MISS'), pools, text };
    };
    const before = await answered();
    // Two fresh connections: the primary hands them to both workers in turn; each one sums both.
    for (let i = 0; i < 4; i++) assert.equal((await fresh(`/${id}/zarr/${chunkPath}`)).status, 200);
    const first = await answered();
    const second = await answered();
    assert.equal(first.total, before.total + 4, first.text.split('\n').filter((l) => l.startsWith('nds_gateway')).join('\n'));
    assert.equal(second.total, first.total);
    // Each worker holds a pool of 3 (the gateway's default): the sum says 6.
    assert.equal(first.pools, 6);
    assert.match(first.text, /nds_http_request_duration_seconds_count\{method="GET",route="gateway",status="200"\} \d+/);
  });

  it('stops its workers and exits 0 on SIGTERM', async () => {
    const workers = await workerPids();
    assert.equal(workers.length, 2);
    gateway.kill('SIGTERM');
    assert.equal(await exited, 0);
    for (const pid of workers) assert.throws(() => process.kill(pid, 0), 'worker still running');
  });
});
