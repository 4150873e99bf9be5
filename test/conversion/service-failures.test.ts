/**
 * A recording given up for faults of the service is listed in `index.json` as the service's failure, and the
 * next conversion of the dataset tries it again, though its file did not change. Such faults: the object store
 * refused its writes, or could not give its content, on every attempt; its workers were lost past the attempts
 * cap. A file the converter refused is the file's failure: later conversions keep it until the file changes.
 * Before, both were kept alike, and a recording the store failed stayed failed until its file changed or a
 * full regeneration; a content read that failed was even reported as the converter failing on the file.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { reclaimLostTasks } from '../../src/conversion/task-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import type { Deps } from '../../src/deps.js';
import type { StoreIndex } from '../../src/formats/zarr/store-index.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { until } from './gated-store.js';
import { fixtures, gitIn, hostedSource, hostRepository, makeEdfRepo, sineEdf } from './support.js';

const id = 'nd000937';
const SUB01 = 'sub-01/eeg/sub-01_task-rest_eeg.edf';
const SUB02 = 'sub-02/eeg/sub-02_task-rest_eeg.edf';
const SUB03 = 'sub-03/eeg/sub-03_task-rest_eeg.edf';

/** The store, but every write under `prefix` fails (an S3 that answers 503 to each attempt). */
function refusingWritesUnder(objects: ObjectStore, prefix: string): ObjectStore {
  return new Proxy(objects, {
    get(target, prop) {
      if (prop === 'put') {
        return async (key: string, ...rest: unknown[]) => {
          if (key.startsWith(prefix)) throw new Error('503 Slow Down');
          return (target.put as (...a: unknown[]) => unknown).call(target, key, ...rest);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/**
 * The folder store, but its objects under `prefix` cannot be read: no link to them (a store on another file
 * system: EXDEV) and every read fails (an I/O error of the moment).
 */
function unreadableUnder(objects: ObjectStore, prefix: string): ObjectStore {
  return new Proxy(objects, {
    get(target, prop) {
      if (prop === 'pathOf' || prop === 'get' || prop === 'readAll') {
        return (key: string, ...rest: unknown[]) => {
          if (key.startsWith(prefix)) {
            if (prop === 'pathOf') throw Object.assign(new Error('cross-device link'), { code: 'EXDEV' });
            return Promise.reject(Object.assign(new Error('i/o error'), { code: 'EIO' }));
          }
          return (Reflect.get(target, prop, target) as (...a: unknown[]) => unknown).call(target, key, ...rest);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe("a recording given up for the service's faults", { timeout: 240_000 }, () => {
  let server: TestServer;
  let repo: string;

  before(async () => {
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false', CONVERSION_MAX_ATTEMPTS: '3' } });
    const owner = await createAccount(server, { role: 'admin' });
    const source = makeEdfRepo(server.dataDir, 'service-failures-src', { subjects: 2, seconds: 10, channels: 2, rate: 100 });
    // sub-03: an EDF cut in half, which the converter refuses (corrupt_or_truncated) whoever converts it.
    const edf = readFileSync(path.join(fixtures, 'mne-python/edf/test.edf'));
    mkdirSync(path.join(source, 'sub-03/eeg'), { recursive: true });
    writeFileSync(path.join(source, SUB03), edf.subarray(0, Math.floor(edf.length / 2)));
    gitIn(source, 'add', '-A');
    gitIn(source, 'commit', '-q', '-m', 'a truncated recording');
    repo = hostRepository(server.config.gitDir, id, source);
    await insertDatasetRows(server.deps.db, { id, name: 'Service failures', owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(() => server.close());

  /** Converts the repository's head with `deps` (a worker of its own), to the end; returns the index and the job's tasks. */
  async function convert(deps: Deps, datasetId = id) {
    const { job } = await enqueueConversion(server.deps.db, { datasetId, ref: 'main', full: false, reason: 'test' });
    const worker = startWorker(deps, { pollMs: 10 });
    try {
      await until('job done', async () => (await server.deps.db.selectFrom('conversion_jobs').select('state').where('id', '=', job.id).executeTakeFirstOrThrow()).state === 'done');
    } finally {
      await worker.stop();
    }
    const index = JSON.parse((await server.deps.objects.readAll(`${datasetId}/zarr/index.json`))!.toString()) as StoreIndex;
    const tasks = await server.deps.db.selectFrom('conversion_tasks').select(['path', 'attempts']).where('job_id', '=', job.id).orderBy('position').execute();
    return { index, tasks };
  }

  it('is converted by the next conversion, which still keeps the failure of a corrupt file', async () => {
    const first = await convert({ ...server.deps, objects: refusingWritesUnder(server.deps.objects, `${id}/zarr/sub-02/`) });
    assert.deepEqual(first.index.stores.map((s) => s.path), [SUB01]);
    assert.deepEqual(
      first.index.failures.map((f) => [f.path, f.code, f.kind]),
      [
        [SUB02, 'file_read_error', 'service'],
        [SUB03, 'corrupt_or_truncated', 'file'],
      ],
    );
    assert.equal(first.tasks.find((t) => t.path === SUB02)?.attempts, 3, 'the store was tried on every attempt');
    const corrupt = first.index.failures.find((f) => f.path === SUB03)!;

    // A commit that changes sub-01 only; the store answers again.
    writeFileSync(path.join(repo, SUB01), sineEdf(2, 7));
    gitIn(repo, 'commit', '-q', '-am', 'sub-01 changed');
    const next = await convert(server.deps);
    assert.deepEqual(next.tasks.map((t) => t.path), [SUB01, SUB02], 'sub-02 is tried again, sub-03 is not');
    assert.deepEqual(next.index.stores.map((s) => s.path), [SUB01, SUB02]);
    assert.deepEqual(next.index.failures, [corrupt], "the corrupt file's failure is kept as it was");
  });

  it('is converted by the next conversion when the store could not give its content (a git-lfs file)', async () => {
    const lfsId = 'nd000939';
    const content = Buffer.from(sineEdf(2, 4));
    const sha = createHash('sha256').update(content).digest('hex');
    await server.deps.objects.put(`${lfsId}/objects/${sha}`, content);
    const source = makeEdfRepo(server.dataDir, 'service-failures-lfs', { subjects: 1, seconds: 10, channels: 2, rate: 100 });
    mkdirSync(path.join(source, 'sub-02/eeg'), { recursive: true });
    writeFileSync(path.join(source, SUB02), `version https://git-lfs.github.com/spec/v1\noid sha256:${sha}\nsize ${content.length}\n`);
    gitIn(source, 'add', '-A');
    gitIn(source, 'commit', '-q', '-m', 'a git-lfs recording');
    const lfsRepo = hostRepository(server.config.gitDir, lfsId, source);
    const owner = await server.deps.db.selectFrom('datasets').select('owner_id').where('id', '=', id).executeTakeFirstOrThrow();
    await insertDatasetRows(server.deps.db, { id: lfsId, name: 'Service failures (lfs)', owner_id: owner.owner_id, visibility: 'public', source_repo: hostedSource });

    const first = await convert({ ...server.deps, objects: unreadableUnder(server.deps.objects, `${lfsId}/objects/`) }, lfsId);
    // Its three attempts ran on one checkout: each found the file to fill again, not a file gone.
    assert.deepEqual(first.index.failures.map((f) => [f.path, f.code, f.kind]), [[SUB02, 'file_read_error', 'service']], JSON.stringify(first.index.failures));

    writeFileSync(path.join(lfsRepo, SUB01), sineEdf(2, 8));
    gitIn(lfsRepo, 'commit', '-q', '-am', 'sub-01 changed');
    const next = await convert(server.deps, lfsId);
    assert.deepEqual(next.index.stores.map((s) => s.path), [SUB01, SUB02]);
    assert.deepEqual(next.index.failures, []);
  });

  it("is the file's failure, kept by later conversions, when its workers were lost past the attempts cap (a poison recording)", async () => {
    const ended = server.clock.now();
    const job = await server.deps.db
      .insertInto('conversion_jobs')
      .values({ dataset_id: id, ref: 'main', state: 'failed', reason: 'test', worker_id: null, started_at: ended, heartbeat_at: ended, finished_at: ended, result: null, error: null, plan: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const lostAt = new Date(ended.getTime() - 10 * 60_000);
    await server.deps.db
      .insertInto('conversion_tasks')
      .values({ job_id: job.id, position: 0, path: SUB02, zarr: SUB02.replace(/\.edf$/, '.zarr'), state: 'running', attempts: 3, worker_id: 'elsewhere:1:1:gone', started_at: lostAt, heartbeat_at: lostAt, finished_at: null, store: null, failure: null, error: null })
      .execute();
    const { givenUp } = await reclaimLostTasks(server.deps.db, ended, { leaseMs: 30_000, maxAttempts: 3 }, () => false);
    assert.deepEqual(givenUp.map((t) => t.path), [SUB02]);
    const task = await server.deps.db.selectFrom('conversion_tasks').select('failure').where('job_id', '=', job.id).executeTakeFirstOrThrow();
    assert.equal((task.failure as { kind?: string } | null)?.kind, 'file');
  });
});
