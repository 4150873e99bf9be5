import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { ndsAs } from '../support/cli.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { hostCopy, hostedSource, makeBidsRepo } from '../conversion/support.js';

const nds = (server: TestServer, key: string, args: string[]) => ndsAs(server, key, args).done;

describe('nds admin zarr', () => {
  let server: TestServer;
  let admin: TestAccount;
  let repo: string;
  before(async () => {
    server = await startTestServer();
    admin = await createAccount(server, { role: 'admin' });
    repo = makeBidsRepo();
    for (const id of ['nd000201', 'nd000202', 'nd000203']) hostCopy(server.config.gitDir, id, repo);
    const base = { owner_id: admin.user.id, source_repo: hostedSource };
    await insertDatasetRows(server.deps.db, [
      { ...base, id: 'nd000201', name: 'public one', visibility: 'public' },
      { ...base, id: 'nd000202', name: 'public two', visibility: 'public' },
      { ...base, id: 'nd000203', name: 'private', visibility: 'private' },
    ]);
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('regenerate dispatches, and status shows the converted copy', async () => {
    const r = await nds(server, admin.key, ['admin', 'zarr', 'regenerate', 'nd000201', '--full']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /dispatched a full conversion of nd000201/);
    await server.worker!.idle();
    const s = await nds(server, admin.key, ['admin', 'zarr', 'status', 'nd000201', '--json']);
    assert.equal(s.code, 0, s.stderr);
    const status = JSON.parse(s.stdout);
    assert.equal(status.zarr_status, 'ready');
    assert.equal(status.zarr_store_count, 2);
    assert.match(status.zarr_source_commit, /^[0-9a-f]{40}$/);
    const text = await nds(server, admin.key, ['admin', 'zarr', 'status', 'nd000201']);
    assert.match(text.stdout, /zarr_status\s+ready/);
    assert.match(text.stdout, /stores\s+2/);
  });

  it('backfill --all dispatches every public dataset and no private one, with a summary', async () => {
    const r = await nds(server, admin.key, ['admin', 'zarr', 'backfill', '--all', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { public_datasets: 2, dispatched: 2, failed: [] });
    await server.worker!.idle();
    const rows = await server.deps.db.selectFrom('datasets').select(['id', 'zarr_status']).orderBy('id').execute();
    assert.deepEqual(rows.map((d) => [d.id, d.zarr_status]), [['nd000201', 'ready'], ['nd000202', 'ready'], ['nd000203', null]]);
    const human = await nds(server, admin.key, ['admin', 'zarr', 'backfill', '--all']);
    assert.match(human.stderr, /backfill: 2 of 2 public datasets dispatched/);
    const refused = await nds(server, admin.key, ['admin', 'zarr', 'backfill']);
    assert.notEqual(refused.code, 0);
  });

  it('prints the server\'s message, not a stack trace, for a refusal', async () => {
    const member = await createAccount(server);
    const r = await nds(server, member.key, ['admin', 'zarr', 'status', 'nd000201']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'nds: This needs an administrator. (admin_required)');
    const missing = await nds(server, admin.key, ['admin', 'zarr', 'regenerate', 'nd999999']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /dataset_not_found/);
  });
});
