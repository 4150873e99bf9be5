/**
 * Two pushes of one repository that end at once each measure it and record its size against the owner's
 * storage quota (`recordRepositoryBytes`, after git exits). Before, the measurement taken first could be written
 * last: the repository then counted as it was before the other push, until the next push measured it again.
 * Now each is measured and written under the dataset row's lock: the later measurement is always written last.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { repositoryBytes } from '../../src/git/repository-dir.js';
import { GIT_GRANT_KEY, recordRepositoryBytes } from '../../src/datasets/storage-quota.js';

describe("a hosted repository's size, measured by two pushes ending at once", () => {
  let server: TestServer;
  let dir: string;
  const id = 'nd000371';
  before(async () => {
    server = await startTestServer();
    const owner = await createAccount(server);
    await insertDatasetRows(server.deps.db, { id, name: 'Race', owner_id: owner.user.id });
    dir = mkdtempSync(path.join(os.tmpdir(), 'nds-measure-race-'));
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const recorded = async () =>
    (await server.deps.db.selectFrom('storage_grants').select('bytes').where('dataset_id', '=', id).where('object_key', '=', GIT_GRANT_KEY).executeTakeFirstOrThrow()).bytes;

  it('keeps the later measurement, however long the earlier one takes to be written', async () => {
    writeFileSync(path.join(dir, 'pack-1'), Buffer.alloc(1000));
    // The first push's measurement: the repository as it is now, held up before it is written (a slow disk, a
    // busy database).
    let measured!: () => void;
    const firstMeasured = new Promise<void>((resolve) => (measured = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const first = recordRepositoryBytes(server.deps, id, dir, async (folder) => {
      const bytes = await repositoryBytes(folder);
      measured();
      await released;
      return bytes;
    });
    await firstMeasured;
    // The second push lands its pack, then measures.
    writeFileSync(path.join(dir, 'pack-2'), Buffer.alloc(5000));
    const second = recordRepositoryBytes(server.deps, id, dir);
    // Before, the second was written at once, and the first then over it. Now the second waits for the first:
    // it is given a second to end first, then the first goes on.
    await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 1000))]);
    release();
    await Promise.all([first, second]);
    assert.equal(await recorded(), await repositoryBytes(dir));
    assert.equal(await recorded(), 6000);
  });
});
