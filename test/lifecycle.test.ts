import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/core/config.js';
import { createLogger } from '../src/core/log.js';
import { ManualClock } from '../src/core/clock.js';
import { closeDeps, openServerDeps, startWorkerProcess } from '../src/lifecycle.js';
import type { StoreMetadata } from '../src/recordings/store-metadata.js';
import { pgliteDump } from './support/test-server.js';

describe('nds worker with METRICS_PORT', () => {
  let worker: Awaited<ReturnType<typeof startWorkerProcess>>;
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'nds-worker-probes-'));
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'pglite:memory', METRICS_PORT: '0', LOG_LEVEL: 'silent' });
    worker = await startWorkerProcess({ config, log: createLogger('silent') });
  });
  after(async () => {
    await worker.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers /healthz and /readyz for monitors and load balancers, with a request id', async () => {
    assert.ok(worker.metricsUrl);
    const health = await fetch(`${worker.metricsUrl}/healthz`);
    assert.deepEqual([health.status, await health.json()], [200, { ok: true, database: 'up' }]);
    assert.match(health.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const ready = await fetch(`${worker.metricsUrl}/readyz`);
    assert.deepEqual([ready.status, await ready.json()], [200, { ready: true, database: 'up' }]);
    assert.equal((await fetch(`${worker.metricsUrl}/datasets`)).status, 404);
  });

  it('answers /metrics: the queue, the conversions, the database pool and its own probes', async () => {
    await fetch(`${worker.metricsUrl}/healthz`);
    const text = await (await fetch(`${worker.metricsUrl}/metrics`)).text();
    assert.match(text, /^nds_conversion_queue_depth 0$/m);
    assert.match(text, /^# TYPE nds_conversion_job_duration_seconds histogram$/m);
    assert.match(text, /^# TYPE nds_conversion_throughput_mb_per_second histogram$/m);
    assert.match(text, /^nds_db_pool_max \d+$/m);
    assert.match(text, /nds_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} [1-9]/);
  });
});

describe('nds serve: the read side of recordings', () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof openServerDeps>>;
  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'nds-read-side-'));
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: 'pglite:memory', LOG_LEVEL: 'silent' });
    server = await openServerDeps({ config, log: createLogger('silent'), clock: new ManualClock(), pgliteDump: await pgliteDump() });
  });
  after(async () => {
    await closeDeps(server.opened);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('looks a dataset\'s recordings up again once a conversion here rewrote its copy, before the look-up expires', async () => {
    const { storeLookups } = server.deps.recordingCaches;
    const store: StoreMetadata = { prefix: 'nd000001/zarr/a/', etag: '"v1"', root: {}, groups: [] };
    let asked = 0;
    const lookUp = async () => (asked++, store);
    await storeLookups.find('', 'nd000001', 'a.edf', lookUp);
    await storeLookups.find('', 'nd000001', 'a.edf', lookUp);
    assert.equal(asked, 1);
    // What a finished conversion announces (`recordZarrReady`); the clock has not moved.
    for (const hook of server.deps.hooks.zarrChanged) await hook('nd000001', ['index.json', 'a/zarr.json']);
    await storeLookups.find('', 'nd000001', 'a.edf', lookUp);
    assert.equal(asked, 2);
  });
});
