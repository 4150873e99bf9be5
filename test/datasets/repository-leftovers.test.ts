/**
 * A dataset deleted through one node leaves its repository on the disk of the node that holds it (decision
 * 0026); that node removes it at its next start (`removeDeletedRepositories`), and nothing else.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { removeDeletedRepositories } from '../../src/datasets/hosted-repository.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('repositories of deleted datasets', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it("are removed from the holder's disk; a live dataset's repository and other folders stay", async () => {
    const owner = await createAccount(server);
    await insertDatasetRows(server.deps.db, { id: 'nd000611', name: 'Alive', owner_id: owner.user.id, visibility: 'private' });
    const folder = (name: string) => {
      mkdirSync(path.join(server.config.gitDir, name, 'refs'), { recursive: true });
      return path.join(server.config.gitDir, name);
    };
    const [alive, deleted, other] = [folder('nd000611.git'), folder('nd000612.git'), folder('not-a-dataset')];
    assert.equal(await removeDeletedRepositories(server.deps), 1);
    assert.deepEqual([existsSync(alive), existsSync(deleted), existsSync(other)], [true, false, true]);
  });
});
