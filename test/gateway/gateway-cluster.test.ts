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
    const env = {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: api.config.databaseUrl,
      OBJECT_STORE_URL: api.config.objectStoreUrl,
      GATEWAY_WORKERS: '2',
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

  it('stops its workers and exits 0 on SIGTERM', async () => {
    const workers = await workerPids();
    assert.equal(workers.length, 2);
    gateway.kill('SIGTERM');
    assert.equal(await exited, 0);
    for (const pid of workers) assert.throws(() => process.kill(pid, 0), 'worker still running');
  });
});
