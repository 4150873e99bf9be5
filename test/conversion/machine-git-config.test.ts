/**
 * A dataset uploaded with `nds datasets upload --git` converts on a machine where git-lfs is installed.
 * Debian's git-lfs package writes its filter into the system git configuration, `required = true` included;
 * the conversion's checkout used to run with it and failed on every pointer ("Smudge error: Error
 * downloading sub-01/…edf"). The machine configuration here is a file of the test's own (GIT_CONFIG_SYSTEM),
 * so the test holds whatever /etc/gitconfig says.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ndsAs } from '../support/cli.js';
import type { TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader } from '../datasets/support.js';
import { fixtures } from './support.js';

describe("a dataset uploaded with --git, on a machine with git-lfs's system filter", () => {
  let server: TestServer;
  let owner: TestAccount;
  let tmp: string;
  let saved: string | undefined;

  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-machine-git-'));
    const system = path.join(tmp, 'gitconfig');
    writeFileSync(system, '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n\tprocess = git-lfs filter-process\n\trequired = true\n');
    saved = process.env.GIT_CONFIG_SYSTEM;
    // The server runs in this process: its git would read this as the machine's configuration.
    process.env.GIT_CONFIG_SYSTEM = system;
    server = await startTestServer();
    owner = await createUploader(server);
  });
  after(async () => {
    await server?.close();
    if (saved === undefined) delete process.env.GIT_CONFIG_SYSTEM;
    else process.env.GIT_CONFIG_SYSTEM = saved;
    rmSync(tmp, { recursive: true, force: true });
  });

  it('converts the recording', async () => {
    const made = await ndsAs(server, owner.key, ['datasets', 'create', 'LFS upload', '--json']).done;
    assert.equal(made.code, 0, made.stderr);
    const id = JSON.parse(made.stdout).id as string;
    const folder = path.join(tmp, 'bids');
    mkdirSync(path.join(folder, 'sub-01/eeg'), { recursive: true });
    writeFileSync(path.join(folder, 'dataset_description.json'), '{"Name": "LFS upload", "BIDSVersion": "1.9.0"}\n');
    writeFileSync(path.join(folder, 'sub-01/eeg/sub-01_task-rest_eeg.json'), '{"TaskName": "rest"}\n');
    copyFileSync(path.join(fixtures, 'mne-python/edf/test.edf'), path.join(folder, 'sub-01/eeg/sub-01_task-rest_eeg.edf'));
    const up = await ndsAs(server, owner.key, ['datasets', 'upload', id, folder, '--git', '--wait', '--wait-timeout', '120']).done;
    assert.equal(up.code, 0, `${up.stdout}\n${up.stderr}`);
    assert.match(up.stdout, /^converted {2}sub-01\/eeg\/sub-01_task-rest_eeg\.edf: /m);
    const d = await server.deps.db.selectFrom('datasets').select(['zarr_status', 'zarr_store_count', 'source_repo']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(d, { zarr_status: 'ready', zarr_store_count: 1, source_repo: 'hosted' });
  });
});
