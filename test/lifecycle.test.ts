import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/core/config.js';
import { createLogger } from '../src/core/log.js';
import { startWorkerProcess } from '../src/lifecycle.js';

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
