/** Wanted sweeps and the copy's lease (decision 0016): how wants merge, when one is done, who holds the lease. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findSweepWant, finishSweepWant, listDueSweeps, releaseCopyLease, takeCopyLease, wantSweep } from '../../src/conversion/copy-exposure-queries.js';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createUser } from '../../src/accounts/users.js';
import { loadConfig } from '../../src/core/config.js';
import { updateDatasetFields } from '../../src/datasets/dataset-queries.js';
import { closeDeps, openDeps, PROCESS_PARTS, type OpenedDeps } from '../../src/lifecycle.js';
import { insertDatasetRows } from '../support/datasets.js';
import { createPostgresTestDatabase, pgliteDump, usingPostgres } from '../support/test-server.js';

describe('copy sweeps wanted, and the copy lease', () => {
  // A worker's deps: the database alone, with no sweeper of `nds serve` doing the wants behind the test's back.
  let opened: OpenedDeps;
  let server: { deps: OpenedDeps['deps'] };
  let dataDir: string;
  let drop: () => Promise<void> = async () => {};
  const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, s));

  before(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'nds-exposure-'));
    let databaseUrl = 'pglite:memory';
    if (usingPostgres) ({ url: databaseUrl, drop } = await createPostgresTestDatabase());
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
    opened = await openDeps({ config, pgliteDump: usingPostgres ? undefined : await pgliteDump() }, PROCESS_PARTS.worker);
    server = { deps: opened.deps };
    const owner = await createUser(opened.deps.db, { username: 'exposure-owner', email: 'exposure@example.org', status: 'approved', role: 'member', kind: 'person' }, new Date());
    await insertDatasetRows(opened.deps.db, ['nd000901', 'nd000902', 'nd000903'].map((id) => ({ id, name: id, owner_id: owner.id, visibility: 'private' as const })));
  });
  after(async () => {
    if (opened) await closeDeps(opened);
    await drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('merges scopes into a want not done yet, and a whole copy absorbs any scope', async () => {
    const db = server.deps.db;
    assert.equal(await findSweepWant(db, 'nd000901'), undefined);
    await wantSweep(db, 'nd000901', ['index.json', 'a.zarr/']);
    await wantSweep(db, 'nd000901', ['b.zarr/', 'index.json']);
    assert.deepEqual(await findSweepWant(db, 'nd000901'), { wantSeq: 2, doneSeq: 0, scope: ['a.zarr/', 'b.zarr/', 'index.json'] });
    await wantSweep(db, 'nd000901', null);
    await wantSweep(db, 'nd000901', ['c.zarr/']);
    assert.deepEqual(await findSweepWant(db, 'nd000901'), { wantSeq: 4, doneSeq: 0, scope: null });
  });

  it('finishes a want only if no later one came, and starts afresh after', async () => {
    const db = server.deps.db;
    assert.equal(await finishSweepWant(db, 'nd000901', 3), false, 'a later want came');
    assert.equal(await finishSweepWant(db, 'nd000901', 4), true);
    assert.deepEqual(await findSweepWant(db, 'nd000901'), { wantSeq: 4, doneSeq: 4, scope: null });
    await wantSweep(db, 'nd000901', ['d.zarr/']);
    assert.deepEqual(await findSweepWant(db, 'nd000901'), { wantSeq: 5, doneSeq: 4, scope: ['d.zarr/'] });
  });

  it('wants a whole sweep in the same statement that changes a visibility, and nothing for other changes', async () => {
    const db = server.deps.db;
    await updateDatasetFields(db, 'nd000902', { name: 'renamed' }, at(0));
    assert.equal(await findSweepWant(db, 'nd000902'), undefined);
    await updateDatasetFields(db, 'nd000902', { visibility: 'public' }, at(0));
    assert.deepEqual(await findSweepWant(db, 'nd000902'), { wantSeq: 1, doneSeq: 0, scope: null });
    await wantSweep(db, 'nd000902', ['index.json']);
    await updateDatasetFields(db, 'nd000902', { visibility: 'private' }, at(0));
    assert.deepEqual(await findSweepWant(db, 'nd000902'), { wantSeq: 3, doneSeq: 0, scope: null });
  });

  it('lists due wants whose lease is free or expired', async () => {
    const db = server.deps.db;
    const due = await listDueSweeps(db, at(0), 100);
    assert.ok(due.includes('nd000901') && due.includes('nd000902'), due.join());
    assert.equal(await takeCopyLease(db, 'nd000902', 'a', at(0), at(60)), true);
    assert.ok(!(await listDueSweeps(db, at(30), 100)).includes('nd000902'), 'held');
    assert.ok((await listDueSweeps(db, at(60), 100)).includes('nd000902'), 'expired');
  });

  it('gives the lease to one holder at a time, renews it for that holder, and takes it over once expired', async () => {
    const db = server.deps.db;
    assert.equal(await takeCopyLease(db, 'nd000903', 'a', at(0), at(60)), true);
    assert.equal(await takeCopyLease(db, 'nd000903', 'b', at(10), at(70)), false);
    assert.equal(await takeCopyLease(db, 'nd000903', 'a', at(50), at(110)), true, 'renewed');
    assert.equal(await takeCopyLease(db, 'nd000903', 'b', at(100), at(160)), false);
    assert.equal(await takeCopyLease(db, 'nd000903', 'b', at(110), at(170)), true, 'expired');
    await releaseCopyLease(db, 'nd000903', 'a');
    assert.equal(await takeCopyLease(db, 'nd000903', 'c', at(120), at(180)), false, "a former holder's release leaves the new holder's lease");
    await releaseCopyLease(db, 'nd000903', 'b');
    assert.equal(await takeCopyLease(db, 'nd000903', 'c', at(120), at(180)), true);
    assert.equal(await takeCopyLease(db, 'nd000999', 'c', at(120), at(180)), undefined, 'no such dataset');
    assert.equal(await wantSweep(db, 'nd000999', null), false);
  });
});
