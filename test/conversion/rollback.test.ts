/**
 * A push's delivery converts where `main` is when the job is planned: a force-push back to an older commit is
 * converted, a late delivery of a commit `main` left converts nothing, and an older delivery arriving alone
 * converts the later commit `main` is at. A regeneration converts the commit it names.
 */
import assert from 'node:assert/strict';
import { rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { checkoutForJob, planConversionJob } from '../../src/conversion/conversion-job.js';
import { regenerateZarr } from '../../src/conversion/zarr-administration.js';
import { gitIn, hostedSource, hostRepository, makeBidsRepo, pushPayload, readObject, signGithub } from './support.js';

const SECRET = 'gh-secret';

describe('a branch rolled back to an older commit', () => {
  let server: TestServer;
  let admin: TestAccount;
  let repo: string;
  /** The commit the first test pushes and then undoes. */
  let second: string;
  const id = 'nd000191';

  before(async () => {
    server = await startTestServer({ env: { GITHUB_WEBHOOK_SECRET: SECRET } });
    admin = await createAccount(server, { role: 'admin' });
    repo = hostRepository(server.config.gitDir, id, makeBidsRepo());
    await insertDatasetRows(server.deps.db, { id, name: 'Rollback', owner_id: admin.user.id, visibility: 'public', source_repo: hostedSource, external_ids: ['github:test-org/ds-rollback'] });
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  async function push(payload: unknown) {
    const body = JSON.stringify(payload);
    return fetch(`${server.url}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': signGithub(SECRET, body) },
      body,
    });
  }
  const dataset = () => server.deps.db.selectFrom('datasets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const lastJob = async () => (await server.deps.db.selectFrom('conversion_jobs').selectAll().where('dataset_id', '=', id).orderBy('id', 'desc').executeTakeFirstOrThrow());

  it("converts a force-push's delivery of an older commit: main is there now", async () => {
    const first = gitIn(repo, 'rev-parse', 'HEAD');
    await push(pushPayload('test-org/ds-rollback', first, { added: ['sub-02/eeg/sub-02_task-rest_eeg.edf'] }));
    await server.worker!.idle();
    assert.equal((await dataset()).zarr_store_count, 2);

    unlinkSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_eeg.edf'));
    gitIn(repo, 'commit', '-qam', 'remove a recording (by mistake)');
    second = gitIn(repo, 'rev-parse', 'HEAD');
    await push(pushPayload('test-org/ds-rollback', second, { removed: ['sub-02/eeg/sub-02_task-rest_eeg.edf'] }));
    await server.worker!.idle();
    assert.deepEqual([(await dataset()).zarr_source_commit, (await dataset()).zarr_store_count], [second, 1]);

    // The owner undoes it (git push --force origin HEAD~1:main): its delivery names a commit older than the copy's.
    gitIn(repo, 'reset', '-q', '--hard', first);
    await push({ ...pushPayload('test-org/ds-rollback', first, { added: ['sub-02/eeg/sub-02_task-rest_eeg.edf'] }), forced: true });
    await server.worker!.idle();
    const job = await lastJob();
    assert.equal(job.state, 'done');
    assert.equal((job.result as { commit?: string }).commit, first);
    const d = await dataset();
    assert.deepEqual([d.zarr_status, d.zarr_source_commit, d.zarr_store_count], ['ready', first, 2]);
    assert.ok(await server.deps.objects.head(`${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`), 'the recording is back');
  });

  it('skips a late delivery of the commit main left, writing nothing', async () => {
    // GitHub sends the undone commit's delivery again (a redelivery, or one that came late).
    const first = gitIn(repo, 'rev-parse', 'HEAD');
    const index = await readObject(server, `${id}/zarr/index.json`);
    // (nds takes a body once: this one differs from the first delivery of `second` as a real late one would.)
    const late = await push({ ...pushPayload('test-org/ds-rollback', second, { removed: ['sub-02/eeg/sub-02_task-rest_eeg.edf'] }), before: first });
    assert.equal((await late.json()).dispatched, true);
    await server.worker!.idle();
    assert.deepEqual((await lastJob()).result, { skipped: 'stale_delivery', commit: second, main: first });
    assert.deepEqual(await readObject(server, `${id}/zarr/index.json`), index, 'index.json is as it was');
    assert.ok(await server.deps.objects.head(`${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`), 'the recording is not removed');
    const d = await dataset();
    assert.deepEqual([d.zarr_status, d.zarr_source_commit, d.zarr_store_count], ['ready', first, 2]);
  });

  it('converts where main is when only an older delivery arrives (a later one lost, or replaced in the queue)', async () => {
    const first = gitIn(repo, 'rev-parse', 'HEAD');
    unlinkSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_eeg.edf'));
    gitIn(repo, 'commit', '-qam', 'remove a recording');
    const third = gitIn(repo, 'rev-parse', 'HEAD');
    // The delivery of `third` never comes (or waited in the queue and was replaced); one of `first` does, late.
    const late = await push({ ...pushPayload('test-org/ds-rollback', first, { added: ['sub-02/eeg/sub-02_task-rest_eeg.edf'] }), before: second });
    assert.equal((await late.json()).dispatched, true);
    await server.worker!.idle();
    const job = await lastJob();
    assert.equal(job.state, 'done');
    assert.equal((job.result as { commit?: string }).commit, third);
    const d = await dataset();
    assert.deepEqual([d.zarr_status, d.zarr_source_commit, d.zarr_store_count], ['ready', third, 1]);
    assert.equal(await server.deps.objects.head(`${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`), undefined);
  });

  it('converts the commit an admin names, older than the copy or not', async () => {
    const first = gitIn(repo, 'rev-list', '--max-parents=0', 'HEAD');
    await regenerateZarr(server.deps, id, { ref: first, full: false });
    await server.worker!.idle();
    const d = await dataset();
    assert.deepEqual([d.zarr_status, d.zarr_source_commit, d.zarr_store_count], ['ready', first, 2]);
  });

  /** Queues `first` and then `then` at once (one transaction), so that the second is merged into the first. */
  async function queueTogether(first: Parameters<typeof enqueueConversion>[1], then: Parameters<typeof enqueueConversion>[1]) {
    const { coalesced } = await server.deps.db.transaction().execute(async (trx) => {
      await enqueueConversion(trx, first);
      return enqueueConversion(trx, then);
    });
    assert.equal(coalesced, true);
    await server.worker!.idle();
  }

  it('converts main when a late delivery is merged into a waiting regeneration, whole or not', async () => {
    await regenerateZarr(server.deps, id, { ref: 'main', full: false });
    await server.worker!.idle();
    const main = gitIn(repo, 'rev-parse', 'HEAD');
    const root = gitIn(repo, 'rev-list', '--max-parents=0', 'HEAD');
    assert.deepEqual([(await dataset()).zarr_source_commit, (await dataset()).zarr_store_count], [main, 1]);
    for (const full of [false, true]) {
      // e.g. `nds admin zarr backfill --all --full` waiting while GitHub redelivers an old push.
      await queueTogether({ datasetId: id, ref: 'main', full, reason: 'regenerate' }, { datasetId: id, ref: root, full: false, reason: 'push' });
      const d = await dataset();
      assert.deepEqual([d.zarr_status, d.zarr_source_commit, d.zarr_store_count], ['ready', main, 1], `full: ${full}`);
      assert.equal(await server.deps.objects.head(`${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`), undefined, 'the removed recording stays removed');
    }
  });

  it('queues a dispatch merged into a job that waits with its plan (reclaimed from a lost worker) once the plan has run', async () => {
    const planned = gitIn(repo, 'rev-parse', 'HEAD');
    assert.equal((await dataset()).zarr_source_commit, planned);
    // The plan a lost worker left: of the commit the copy is of, so it converts nothing.
    const source = await checkoutForJob(server.deps, { datasetId: id, ref: planned, full: false, reason: 'regenerate' });
    const plan = await planConversionJob(server.deps, { datasetId: id, ref: planned, full: false, reason: 'regenerate' }, source).finally(() => source.checkout.cleanup());
    // main moves on, and its push is delivered while that job waits in the queue with its plan.
    writeFileSync(path.join(repo, 'README'), 'a later commit');
    gitIn(repo, 'add', 'README');
    gitIn(repo, 'commit', '-qm', 'later');
    const later = gitIn(repo, 'rev-parse', 'HEAD');
    await server.deps.db.transaction().execute(async (trx) => {
      const { job } = await enqueueConversion(trx, { datasetId: id, ref: planned, full: false, reason: 'regenerate' });
      await trx.updateTable('conversion_jobs').set({ plan: JSON.stringify(plan) }).where('id', '=', job.id).execute();
      const { coalesced } = await enqueueConversion(trx, { datasetId: id, ref: later, full: false, reason: 'push' });
      assert.equal(coalesced, true);
    });
    await server.worker!.idle();
    const d = await dataset();
    assert.deepEqual([d.zarr_status, d.zarr_source_commit], ['ready', later], 'the merged push is converted after the plan');
  });
});
