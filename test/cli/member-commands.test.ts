/** `nds datasets members list|add|remove` against a real server: add with a role, list, leave, and a refusal. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { nds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader } from '../datasets/support.js';

describe('nds datasets members', () => {
  let server: TestServer;
  let owner: TestAccount;
  let colleague: TestAccount;
  let tmp: string;
  const env = (who: TestAccount) => ({ NDS_API_URL: server.url, NDS_API_KEY: who.key, XDG_CONFIG_HOME: tmp });
  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    colleague = await createAccount(server);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-members-'));
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('adds a member with a role, lists them, and lets them leave', async () => {
    const id = (await nds(['datasets', 'create', 'Shared EEG'], env(owner))).stdout.trim();
    const refused = await nds(['datasets', 'members', 'add', id, colleague.user.username, '--role', 'owner'], env(owner));
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /--role is one of reader, annotator, maintainer/);
    const added = await nds(['datasets', 'members', 'add', id, colleague.user.username, '--role', 'annotator'], env(owner));
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stderr, new RegExp(`${colleague.user.username} is now an annotator of ${id}`));
    const listed = await nds(['datasets', 'members', 'list', id, '--json'], env(colleague));
    assert.equal(listed.code, 0, listed.stderr);
    const { owner: ownerName, members } = JSON.parse(listed.stdout);
    assert.equal(ownerName, owner.user.username);
    assert.deepEqual(members.map((m: { username: string; role: string }) => [m.username, m.role]), [[colleague.user.username, 'annotator']]);
    const table = await nds(['datasets', 'members', 'list', id], env(owner));
    assert.match(table.stdout, new RegExp(`${owner.user.username}\\s+owner`));
    const left = await nds(['datasets', 'members', 'remove', id, colleague.user.username], env(colleague));
    assert.equal(left.code, 0, left.stderr);
    // Gone: the dataset is private, so its former member is told it does not exist.
    const after = await nds(['datasets', 'members', 'list', id], env(colleague));
    assert.equal(after.code, 1);
    assert.match(after.stderr, /dataset_not_found|No dataset/);
  });
});
