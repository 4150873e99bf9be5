/**
 * A dataset deleted (`DELETE /admin/datasets/:id`) while a recording task of its conversion runs on a worker
 * other than the job's leaves no copy: the job's worker removes what it wrote, and the task's worker, whose
 * task went with the dataset, stops writing and removes its store too. Before, the task's worker went on
 * writing after the job's worker had cleaned up, and its objects stayed under `<id>/zarr/` for good.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { hostedSource, hostRepository, makeEdfRepo } from './support.js';
import { gatedStore } from './gated-store.js';

const id = 'nd000934';

describe('a dataset deleted while another worker converts one of its recordings', { timeout: 240_000 }, () => {
  let server: TestServer;
  let admin: TestAccount;
  let frozenAt = Date.now();
  const clock = { now: () => new Date(frozenAt) };

  before(async () => {
    // When the suite runs, not when its file was loaded (a group of test files loads them long before): the
    // fetch credential a worker signs at this time lives 300 s.
    frozenAt = Date.now();
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    admin = await createAccount(server, { role: 'admin' });
    hostRepository(server.config.gitDir, id, makeEdfRepo(server.dataDir, 'deleted-src', { subjects: 2, seconds: 10, channels: 2, rate: 100 }));
    await insertDatasetRows(server.deps.db, { id, name: 'Deleted mid-way', owner_id: admin.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(() => server.close());

  it('leaves no object of the deleted dataset behind', async () => {
    const heldB = gatedStore(server.deps.objects, (k) => k.startsWith(`${id}/zarr/sub-01/`));
    // B runs the job (a short lease: it notices the deletion quickly); A only takes a task.
    const b = startWorker({ ...server.deps, objects: heldB.objects, clock }, { pollMs: 10, leaseMs: 300 });
    await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    await heldB.gate.reached;
    const heldA = gatedStore(server.deps.objects, (k) => k.startsWith(`${id}/zarr/sub-02/`));
    const a = startWorker({ ...server.deps, objects: heldA.objects, clock }, { pollMs: 10 });
    await heldA.gate.reached;

    const res = await admin.api(`/admin/datasets/${id}`, { method: 'DELETE' });
    assert.equal(res.status, 200, await res.text());

    // The job's worker finds its job gone, stops and removes the copy; then the task's worker resumes.
    heldB.gate.open();
    await b.stop();
    heldA.gate.open();
    await a.stop();

    const left: string[] = [];
    for await (const o of server.deps.objects.list(`${id}/`)) left.push(o.key);
    assert.deepEqual(left, [], 'nothing of the deleted dataset is left in the object store');
  });
});
