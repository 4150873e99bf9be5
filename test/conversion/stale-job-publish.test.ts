/**
 * A job taken from its worker (its lease lapsed while the worker was stalled, and a newer version's job
 * superseded it) is not published by that worker when it resumes: its publication asks the queue under the
 * copy's lease first (`WriteFence`). Before, the older commit's `index.json` replaced the newer one, the
 * dataset's `zarr_source_commit` went back, and the index named stores of the newer commit.
 *
 * The stall is modelled by giving the stalled worker a heartbeat interval longer than the test (a frozen
 * process, a long GC or VM pause runs no timers either).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion, reclaimLostJobs } from '../../src/conversion/job-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, hostedSource, hostRepository, makeEdfRepo, sineEdf } from './support.js';
import { gatedStore, until } from './gated-store.js';

const id = 'nd000931';

describe('a superseded job whose worker resumes after its lease lapsed', { timeout: 240_000 }, () => {
  let server: TestServer;
  let repo: string;
  let frozenAt = Date.now();
  const clock = { now: () => new Date(frozenAt) };

  before(async () => {
    // When the suite runs, not when its file was loaded (a group of test files loads them long before): the
    // fetch credential a worker signs at this time lives 300 s.
    frozenAt = Date.now();
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    const owner = await createAccount(server, { role: 'admin' });
    repo = hostRepository(server.config.gitDir, id, makeEdfRepo(server.dataDir, 'stale-src', { subjects: 2, seconds: 10, channels: 2, rate: 100 }));
    await insertDatasetRows(server.deps.db, { id, name: 'Stale publish', owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(() => server.close());

  it('does not publish its older commit over the newer copy', async () => {
    const db = server.deps.db;
    const commitX = gitIn(repo, 'rev-parse', 'HEAD');
    // Worker A: runs job 1 (commit X) and stalls in its task of sub-02.
    const { objects: gated, gate } = gatedStore(server.deps.objects, (k) => k.startsWith(`${id}/zarr/sub-02/`));
    const a = startWorker({ ...server.deps, objects: gated, clock }, { pollMs: 10, leaseMs: 3_600_000 });
    const { job: job1 } = await enqueueConversion(db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    await gate.reached;

    // A new version arrives (sub-01 changes) while A is stalled; after the lease, housekeeping elsewhere finds
    // job 1 lost and, a newer job waiting, ends it.
    writeFileSync(path.join(repo, 'sub-01/eeg/sub-01_task-rest_eeg.edf'), sineEdf(2, 42));
    gitIn(repo, 'commit', '-q', '-am', 'sub-01 changed');
    const commitY = gitIn(repo, 'rev-parse', 'HEAD');
    const { job: job2 } = await enqueueConversion(db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    await reclaimLostJobs(db, new Date(frozenAt + 120_000), { leaseMs: 30_000, maxAttempts: 3, maxS: 86_400 }, () => false);
    const ended = await db.selectFrom('conversion_jobs').select(['state', 'error']).where('id', '=', job1.id).executeTakeFirstOrThrow();
    assert.equal(ended.state, 'failed', 'job 1 was taken from A');

    // Worker B converts and publishes the new version.
    const b = startWorker({ ...server.deps, clock }, { pollMs: 10 });
    await until('job 2 done', async () => (await db.selectFrom('conversion_jobs').select('state').where('id', '=', job2.id).executeTakeFirstOrThrow()).state === 'done');
    await b.stop();
    const indexY = JSON.parse((await server.deps.objects.readAll(`${id}/zarr/index.json`))!.toString());
    assert.equal(indexY.source_commit, commitY);

    // A resumes.
    gate.open();
    await a.stop();

    const index = JSON.parse((await server.deps.objects.readAll(`${id}/zarr/index.json`))!.toString());
    const row = await db.selectFrom('datasets').select(['zarr_source_commit', 'zarr_status']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.notEqual(commitX, commitY);
    assert.equal(index.source_commit, commitY, `the published index is still of the newest version (A, superseded, published ${commitX} over it)`);
    assert.equal(row.zarr_source_commit, commitY, 'the dataset still records the newest version');
    assert.equal(index.store_count, 2, 'no recording went missing from the copy');
    // Every store the index names is of the index's commit.
    for (const s of index.stores) {
      const root = JSON.parse((await server.deps.objects.readAll(`${id}/zarr/${s.zarr}/zarr.json`))!.toString());
      assert.equal(root.attributes.source.commit, index.source_commit, `${s.zarr} is of the index's commit`);
    }
  });
});
