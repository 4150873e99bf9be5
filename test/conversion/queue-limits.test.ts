/**
 * A queue that gives up: a job lost CONVERSION_MAX_ATTEMPTS times, or running past CONVERSION_MAX_S, ends
 * `failed` with its reason shown to the owner (`zarr_error`) and to administrators (the job's `error`);
 * finished jobs older than CONVERSION_JOBS_KEEP_DAYS are pruned; on PostgreSQL an idle worker wakes on
 * the queue's NOTIFY, long before its next poll.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { startWorker, type RunningWorker } from '../../src/conversion/worker.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';
import { hostCopy, hostedSource, makeBidsRepo } from './support.js';

const HOUR = 3_600_000;

describe('a queue that gives up', () => {
  let server: TestServer;
  let owner: TestAccount;
  const repo = makeBidsRepo();
  let serial = 260;

  before(async () => {
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false', CONVERSION_MAX_ATTEMPTS: '3', CONVERSION_MAX_S: '600', CONVERSION_JOBS_KEEP_DAYS: '30' } });
    owner = await createAccount(server, { role: 'admin' });
  });
  after(() => server.close());

  async function dataset(): Promise<string> {
    const id = `nd000${++serial}`;
    hostCopy(server.config.gitDir, id, repo);
    await insertDatasetRows(server.deps.db, { id, name: `Limits ${id}`, owner_id: owner.user.id, visibility: 'private', source_repo: hostedSource });
    return id;
  }

  /** Runs one worker until it has nothing left to do. */
  async function workOnce(): Promise<void> {
    const worker = startWorker(server.deps, { pollMs: 60_000 });
    try {
      await worker.idle();
    } finally {
      await worker.stop();
    }
  }

  async function shownTo(id: string) {
    const asOwner = (await (await owner.api(`/datasets/${id}`)).json()) as { zarr_status: string; zarr_error: string | null };
    const asAdmin = (await (await owner.api(`/admin/datasets/${id}/zarr`)).json()) as { jobs: Array<{ state: string; error: string | null; attempts: number }> };
    return { asOwner, job: asAdmin.jobs[0] };
  }

  it('a job whose worker was lost 3 times ends failed, with the reason shown to the owner and to administrators', async () => {
    const id = await dataset();
    const { job } = await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    // Its third run's worker went silent 5 minutes ago (the lease is 30 s; the time limit 10 minutes).
    const then = new Date(server.clock.now().getTime() - 5 * 60_000);
    await server.deps.db.updateTable('conversion_jobs').set({ state: 'running', attempts: 3, worker_id: 'elsewhere:1:1:gone', started_at: then, heartbeat_at: then }).where('id', '=', job.id).execute();
    await workOnce();
    const { asOwner, job: shown } = await shownTo(id);
    assert.equal(shown.state, 'failed');
    assert.match(shown.error!, /stopped its worker 3 times/);
    assert.equal(asOwner.zarr_status, 'failed');
    assert.match(asOwner.zarr_error!, /stopped its worker 3 times/);
  });

  it('a lost job started fewer times is run again, to the end', async () => {
    const id = await dataset();
    const { job } = await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    const then = new Date(server.clock.now().getTime() - HOUR / 60);
    await server.deps.db.updateTable('conversion_jobs').set({ state: 'running', attempts: 2, worker_id: 'elsewhere:1:1:gone', started_at: then, heartbeat_at: then }).where('id', '=', job.id).execute();
    await workOnce();
    const { asOwner, job: shown } = await shownTo(id);
    assert.equal(shown.state, 'done');
    assert.equal(asOwner.zarr_status, 'ready');
  });

  it('a job running past CONVERSION_MAX_S is ended, whoever holds it', async () => {
    const id = await dataset();
    const { job } = await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    // Alive (a fresh heartbeat) but started 11 minutes ago, past the 600 s limit.
    const now = server.clock.now();
    await server.deps.db
      .updateTable('conversion_jobs')
      .set({ state: 'running', attempts: 1, worker_id: 'elsewhere:1:1:busy', started_at: new Date(now.getTime() - 11 * 60_000), heartbeat_at: now })
      .where('id', '=', job.id)
      .execute();
    await workOnce();
    const { asOwner, job: shown } = await shownTo(id);
    assert.equal(shown.state, 'failed');
    assert.match(shown.error!, /time limit \(CONVERSION_MAX_S, 600 s\)/);
    assert.equal(asOwner.zarr_status, 'failed');
    assert.match(asOwner.zarr_error!, /time limit/);
  });

  it('finished jobs older than CONVERSION_JOBS_KEEP_DAYS are pruned, younger ones kept', async () => {
    const id = await dataset();
    const now = server.clock.now().getTime();
    const old = (await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'old' })).job;
    await server.deps.db.updateTable('conversion_jobs').set({ state: 'done', finished_at: new Date(now - 31 * 24 * HOUR) }).where('id', '=', old.id).execute();
    const recent = (await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'recent' })).job;
    await server.deps.db.updateTable('conversion_jobs').set({ state: 'failed', finished_at: new Date(now - 29 * 24 * HOUR) }).where('id', '=', recent.id).execute();
    await workOnce();
    const left = await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).execute();
    assert.deepEqual(left.map((j) => j.id), [recent.id]);
  });

  it('an idle worker on PostgreSQL starts a job queued elsewhere at once, not at its next poll', { skip: !usingPostgres && 'LISTEN/NOTIFY needs the PostgreSQL server (PGlite workers poll)' }, async () => {
    const { listenTo } = await import('../../src/db/notifications.js');
    const { QUEUE_CHANNEL } = await import('../../src/conversion/job-queue.js');
    const id = await dataset();
    const worker: RunningWorker = startWorker(server.deps, {
      pollMs: 600_000,
      listen: (wake) => listenTo(server.config.databaseUrl, QUEUE_CHANNEL, wake, () => {}),
    });
    try {
      await worker.idle();
      await new Promise((r) => setTimeout(r, 500));
      const queued = Date.now();
      await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'notify' });
      for (;;) {
        const row = await server.deps.db.selectFrom('datasets').select('zarr_status').where('id', '=', id).executeTakeFirstOrThrow();
        if (row.zarr_status === 'ready') break;
        assert.ok(Date.now() - queued < 60_000, 'converted long before the next poll (10 minutes)');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await worker.stop();
    }
  });
});
