/**
 * A worker's mirror of a dataset's source repository (`<DATA_DIR>/sources/<id>.git`) goes with the dataset.
 * Deleting a dataset (`DELETE /admin/datasets/:id`) or resetting the sandbox (`POST /sandbox/reset`) frees the
 * owner's quota; the mirror holds the whole git history of the dataset (a private one's too), and one left behind
 * let an account's loop of sandbox datasets fill a worker's disk while its quota said it held nothing. A worker
 * whose conversion of the dataset was running at the deletion leaves no mirror either, and a worker process that
 * was down at the deletion (its own DATA_DIR, on another machine) removes the mirror when it starts.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import { sourceMirrorDir } from '../../src/conversion/zarr-ready.js';
import { repositoryBytes } from '../../src/git/repository-dir.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startNds } from '../support/cli.js';
import { insertDatasetRows } from '../support/datasets.js';
import { createPostgresTestDatabase, startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';
import { gatedStore } from './gated-store.js';
import { hostedSource, hostRepository, makeBidsRepo } from './support.js';

/** Bytes left at `mirror`: 0 when it is gone. */
const bytesAt = async (mirror: string) => (existsSync(mirror) ? await repositoryBytes(mirror) : 0);

describe('the source mirror of a deleted dataset, on the in-process worker of nds serve', () => {
  let server: TestServer;
  let admin: TestAccount;
  let owner: TestAccount;
  const SANDBOX_ID = 'sb000931';
  const REAL_ID = 'nd000932';

  before(async () => {
    server = await startTestServer();
    admin = await createAccount(server, { role: 'admin' });
    owner = await createAccount(server, { status: 'verified' });
    await insertDatasetRows(server.deps.db, [
      { id: SANDBOX_ID, name: 'practice', owner_id: owner.user.id, visibility: 'private', sandbox: true, source_repo: hostedSource },
      { id: REAL_ID, name: 'real', owner_id: owner.user.id, visibility: 'private', source_repo: hostedSource },
    ]);
    for (const id of [SANDBOX_ID, REAL_ID]) hostRepository(server.config.gitDir, id, makeBidsRepo());
  });
  after(() => server?.close());

  async function convert(id: string): Promise<string> {
    const r = await admin.api(`/admin/datasets/${id}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) });
    assert.equal(r.status, 202, await r.text());
    await server.worker!.idle();
    const d = (await (await admin.api(`/datasets/${id}`)).json()) as { zarr_status: string; zarr_error: string | null };
    assert.equal(d.zarr_status, 'ready', d.zarr_error ?? '');
    const mirror = sourceMirrorDir(server.config.dataDir, id);
    assert.ok(existsSync(mirror), 'the conversion mirrored the source (the control)');
    return mirror;
  }

  it('is gone once the sandbox is reset', async () => {
    const mirror = await convert(SANDBOX_ID);
    const reset = await owner.api('/sandbox/reset', { method: 'POST' });
    const text = await reset.text();
    assert.equal(reset.status, 200, text);
    assert.deepEqual((JSON.parse(text) as { deleted: string[] }).deleted, [SANDBOX_ID]);
    const storage = (await (await owner.api('/users/me/storage')).json()) as { sandbox: { used_bytes: number } };
    assert.equal(storage.sandbox.used_bytes, 0, 'the quota counts nothing any more');
    const left = await bytesAt(mirror);
    assert.equal(left, 0, `the sandbox was reset, yet ${mirror} still holds ${left} bytes of its git history`);
  });

  it('is gone once an administrator deletes the dataset', async () => {
    const mirror = await convert(REAL_ID);
    const deleted = await admin.api(`/admin/datasets/${REAL_ID}`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, await deleted.text());
    const left = await bytesAt(mirror);
    assert.equal(left, 0, `${REAL_ID} was deleted, yet ${mirror} still holds ${left} bytes of its git history`);
  });
});

describe('the source mirror of a dataset deleted while a worker converts it', () => {
  const id = 'nd000937';
  let server: TestServer;
  let admin: TestAccount;

  before(async () => {
    // No worker in the API process: the deletion there cannot reach the converting worker's mirror itself.
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    admin = await createAccount(server, { role: 'admin' });
    hostRepository(server.config.gitDir, id, makeBidsRepo());
    await insertDatasetRows(server.deps.db, { id, name: 'Deleted mid-way', owner_id: admin.user.id, visibility: 'private', source_repo: hostedSource });
  });
  after(() => server?.close());

  it('is removed by that worker once its job stops, the mirror having been fetched before the deletion', async () => {
    // Held at its first write of the copy: the source is mirrored by then.
    const held = gatedStore(server.deps.objects, (k) => k.startsWith(`${id}/zarr/`));
    const worker = startWorker({ ...server.deps, objects: held.objects }, { pollMs: 10, leaseMs: 300 });
    try {
      await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: true, reason: 'test' });
      await held.gate.reached;
      const mirror = sourceMirrorDir(server.config.dataDir, id);
      assert.ok(existsSync(mirror), 'the conversion mirrored the source (the control)');
      const deleted = await admin.api(`/admin/datasets/${id}`, { method: 'DELETE' });
      assert.equal(deleted.status, 200, await deleted.text());
      held.gate.open();
    } finally {
      await worker.stop();
    }
    const left = await bytesAt(sourceMirrorDir(server.config.dataDir, id));
    assert.equal(left, 0, `${id} was deleted during its conversion, yet its mirror still holds ${left} bytes`);
  });
});

describe('a worker process that was not running when a dataset was deleted', { timeout: 120_000 }, () => {
  const GONE = 'nd000935';
  const KEPT = 'nd000936';
  let root: string;
  let databaseUrl: string;
  let dropDatabase: (() => Promise<void>) | undefined;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'nds-mirror-sweep-'));
    // The database the API node and the worker share: a PGlite folder (one process at a time), or PostgreSQL.
    databaseUrl = `pglite:${path.join(root, 'db')}`;
    if (usingPostgres) ({ url: databaseUrl, drop: dropDatabase } = await createPostgresTestDatabase());
  });
  after(async () => {
    await dropDatabase?.();
    await rm(root, { recursive: true, force: true });
  });

  it('removes the mirror of the deleted dataset when it starts, and keeps the mirror of one that exists', async () => {
    // The worker's own DATA_DIR (another machine's disk), with the mirrors its earlier conversions left.
    const workerDir = path.join(root, 'worker');
    mkdirSync(path.join(workerDir, 'sources'), { recursive: true });
    for (const id of [GONE, KEPT]) execFileSync('git', ['clone', '-q', '--mirror', makeBidsRepo(), sourceMirrorDir(workerDir, id)]);

    // The API node deletes one dataset while the worker is down.
    const api = await startTestServer({ env: { DATABASE_URL: databaseUrl, IN_PROCESS_WORKER: 'false' } });
    try {
      const admin = await createAccount(api, { role: 'admin' });
      await insertDatasetRows(api.deps.db, [
        { id: GONE, name: 'gone', owner_id: admin.user.id, visibility: 'private', source_repo: hostedSource },
        { id: KEPT, name: 'kept', owner_id: admin.user.id, visibility: 'private', source_repo: hostedSource },
      ]);
      const deleted = await admin.api(`/admin/datasets/${GONE}`, { method: 'DELETE' });
      assert.equal(deleted.status, 200, await deleted.text());
    } finally {
      await api.close();
    }
    assert.ok(existsSync(sourceMirrorDir(workerDir, GONE)), 'the API node could not reach the worker\'s disk (the control)');

    const worker = startNds(['worker'], { DATA_DIR: workerDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' });
    try {
      const deadline = Date.now() + 60_000;
      while (!worker.output().stdout.includes('"msg":"source mirrors of deleted datasets removed"')) {
        if (Date.now() > deadline || worker.child.exitCode !== null) assert.fail(`the worker removed no mirror: ${worker.output().stderr}${worker.output().stdout.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
    assert.equal(await bytesAt(sourceMirrorDir(workerDir, GONE)), 0, `${GONE} was deleted, yet the worker kept its mirror`);
    assert.ok(existsSync(sourceMirrorDir(workerDir, KEPT)), `${KEPT} exists: its mirror stays`);
  });
});
