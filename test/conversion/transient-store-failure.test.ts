/**
 * A recording whose task failed for a reason of the moment (the object store refused a write, as S3 answers
 * 503 now and then) is tried again, by this worker or another, while its task has attempts left: it is not
 * published as a failure of the file. Before, it was ("corrupt_or_truncated: The converter failed on this file
 * unexpectedly"), and every later incremental conversion kept that failure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import type { Deps } from '../../src/deps.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { hostedSource, hostRepository, makeEdfRepo } from './support.js';
import { until } from './gated-store.js';

const id = 'nd000936';


/** The store, but its first write under `prefix` fails once (a transient error). */
function failingOnce(objects: ObjectStore, prefix: string): ObjectStore {
  let failed = false;
  return new Proxy(objects, {
    get(target, prop) {
      if (prop === 'put') {
        return async (k: string, ...rest: unknown[]) => {
          if (!failed && k.startsWith(prefix)) {
            failed = true;
            throw new Error('503 Slow Down');
          }
          return (target.put as (...a: unknown[]) => unknown).call(target, k, ...rest);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('a recording whose store write failed for a reason of the moment', { timeout: 240_000 }, () => {
  let server: TestServer;
  let frozenAt = Date.now();
  const clock = { now: () => new Date(frozenAt) };

  before(async () => {
    // When the suite runs, not when its file was loaded (a group of test files loads them long before): the
    // fetch credential a worker signs at this time lives 300 s.
    frozenAt = Date.now();
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    const owner = await createAccount(server, { role: 'admin' });
    hostRepository(server.config.gitDir, id, makeEdfRepo(server.dataDir, 'transient-src', { subjects: 2, seconds: 10, channels: 2, rate: 100 }));
    await insertDatasetRows(server.deps.db, { id, name: 'Transient', owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(() => server.close());

  async function convert(deps: Deps) {
    const { job } = await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    const w = startWorker({ ...deps, clock }, { pollMs: 10 });
    try {
      await until('job done', async () => (await server.deps.db.selectFrom('conversion_jobs').select('state').where('id', '=', job.id).executeTakeFirstOrThrow()).state === 'done');
    } finally {
      await w.stop();
    }
    return JSON.parse((await server.deps.objects.readAll(`${id}/zarr/index.json`))!.toString()) as { stores: Array<{ path: string }>; failures: Array<{ path: string; code: string; reason: string }> };
  }

  it('is converted by another attempt of its task, not published as a failure', async () => {
    const index = await convert({ ...server.deps, objects: failingOnce(server.deps.objects, `${id}/zarr/sub-02/`) });
    assert.deepEqual(index.failures, []);
    assert.deepEqual(index.stores.map((s) => s.path).sort(), ['sub-01/eeg/sub-01_task-rest_eeg.edf', 'sub-02/eeg/sub-02_task-rest_eeg.edf']);
    const attempts = await server.deps.db.selectFrom('conversion_tasks').select(['path', 'attempts']).where('path', '=', 'sub-02/eeg/sub-02_task-rest_eeg.edf').execute();
    assert.ok(attempts.some((t) => t.attempts === 2), `the task of sub-02 took two attempts: ${JSON.stringify(attempts)}`);
  });
});
