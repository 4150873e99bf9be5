/**
 * A recording task taken back from a worker whose lease lapsed is converted again by another worker and
 * published; the first worker, when it resumes, writes nothing more of it (`WriteFence`): before, it wrote its
 * older conversion over the published store in place, or, when its conversion then failed, deleted the store
 * the published index names.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { reclaimLostTasks } from '../../src/conversion/task-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, hostedSource, hostRepository, makeEdfRepo, sineEdf } from './support.js';
import { gatedStore, until, type Gate } from './gated-store.js';

describe('a recording task reclaimed from a worker that is still running it', { timeout: 240_000 }, () => {
  let server: TestServer;
  let frozenAt = Date.now();
  const clock = { now: () => new Date(frozenAt) };
  let owner: TestAccount;

  before(async () => {
    // When the suite runs, not when its file was loaded (a group of test files loads them long before): the
    // fetch credential a worker signs at this time lives 300 s.
    frozenAt = Date.now();
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    owner = await createAccount(server, { role: 'admin' });
  });
  after(() => server.close());

  /**
   * Job 1 of dataset `id`: B runs the job (held in its task of sub-01), A takes the task of sub-02 and is held
   * there; the task of sub-02 is then reclaimed (lease lapsed) and B converts it and publishes job 1.
   * Returns A's gate and the job's commit.
   */
  async function setUp(id: string) {
    const db = server.deps.db;
    const repo = hostRepository(server.config.gitDir, id, makeEdfRepo(server.dataDir, `src-${id}`, { subjects: 2, seconds: 10, channels: 2, rate: 100 }));
    await insertDatasetRows(server.deps.db, { id, name: `Stale task ${id}`, owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
    const heldB = gatedStore(server.deps.objects, (k) => k.startsWith(`${id}/zarr/sub-01/`));
    const b = startWorker({ ...server.deps, objects: heldB.objects, clock }, { pollMs: 10 });
    const { job: job1 } = await enqueueConversion(db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    await heldB.gate.reached;
    const heldA = gatedStore(server.deps.objects, (k) => k.startsWith(`${id}/zarr/sub-02/`));
    const a = startWorker({ ...server.deps, objects: heldA.objects, clock }, { pollMs: 10 });
    await heldA.gate.reached;
    heldB.gate.open();
    // A's lease on the task lapses (a stall, or another host's clock ahead): housekeeping puts the task back.
    await until('sub-01 done by B', async () => (await db.selectFrom('conversion_tasks').select('state').where('job_id', '=', job1.id).where('position', '=', 0).executeTakeFirstOrThrow()).state === 'done');
    // A worker's housekeeping may hold the task's row at that moment (its reclaim skips locked rows): asked again.
    await until('sub-02 requeued', async () => (await reclaimLostTasks(db, new Date(frozenAt + 120_000), { leaseMs: 30_000, maxAttempts: 3 }, () => false)).requeued === 1);
    await until('job 1 done', async () => (await db.selectFrom('conversion_jobs').select('state').where('id', '=', job1.id).executeTakeFirstOrThrow()).state === 'done');
    return { repo, a, b, gateA: heldA.gate as Gate, commitX: gitIn(repo, 'rev-parse', 'HEAD') };
  }

  const storeRoot = async (id: string) => {
    const bytes = await server.deps.objects.readAll(`${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`);
    return bytes && JSON.parse(bytes.toString());
  };
  const indexOf = async (id: string) => JSON.parse((await server.deps.objects.readAll(`${id}/zarr/index.json`))!.toString());

  it('does not write the older version over a newer published store when it resumes', async () => {
    const id = 'nd000932';
    const db = server.deps.db;
    const { repo, a, b, gateA, commitX } = await setUp(id);
    // A new version changes sub-02; B converts and publishes it.
    writeFileSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_eeg.edf'), sineEdf(2, 77));
    gitIn(repo, 'commit', '-q', '-am', 'sub-02 changed');
    const commitY = gitIn(repo, 'rev-parse', 'HEAD');
    const { job: job2 } = await enqueueConversion(db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    await until('job 2 done', async () => (await db.selectFrom('conversion_jobs').select('state').where('id', '=', job2.id).executeTakeFirstOrThrow()).state === 'done');
    await b.stop();
    assert.equal((await indexOf(id)).source_commit, commitY);
    assert.equal((await storeRoot(id)).attributes.source.commit, commitY);

    gateA.open();
    await a.stop();
    const index = await indexOf(id);
    assert.equal(index.source_commit, commitY);
    assert.equal(
      (await storeRoot(id)).attributes.source.commit,
      commitY,
      `the published store of sub-02 is of the index's commit ${commitY} (the reclaimed worker wrote ${commitX}'s over it)`,
    );
  });

  it('does not delete the published store when its own (discarded) conversion fails', async () => {
    const id = 'nd000933';
    const { a, b, gateA } = await setUp(id);
    await b.stop();
    const index = await indexOf(id);
    assert.ok(index.stores.some((s: { zarr: string }) => s.zarr === 'sub-02/eeg/sub-02_task-rest_eeg.zarr'));
    assert.ok(await storeRoot(id), 'the published store is there');

    // A resumes, and its write fails (a full disk, a network error to S3): it discards "its" store.
    gateA.open(new Error('simulated write failure'));
    await a.stop();
    assert.ok(await storeRoot(id), 'the store the published index names is still there');
  });
});
