/**
 * Safe uploads, end to end with the real CLI against a real server: a folder that is not BIDS is refused
 * before anything is sent; `--dry-run` sends nothing; an unchanged folder makes no version; dropping files
 * needs `--yes` off a terminal; `--wait` prints each recording's result and fails on a truncated EDF.
 */
// test.sh: embedded pass only. What this file checks happens in the client (a command's output, its files, its
// retries); the routes it calls have their database work run on PostgreSQL by the HTTP tests.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtures } from '../conversion/support.js';
import { createUploader, json } from '../datasets/support.js';
import type { TestAccount } from '../support/accounts.js';
import { nds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('nds datasets upload checks before it sends', () => {
  let server: TestServer;
  let owner: TestAccount;
  let tmp: string;
  let env: Record<string, string>;
  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-safe-upload-'));
    env = { NDS_API_URL: server.url, NDS_API_KEY: owner.key, NDS_UPLOAD_HASH_CACHE: 'off', XDG_CONFIG_HOME: tmp };
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  const newDataset = async (name: string) => (await json(await owner.api('/datasets', { method: 'POST', body: JSON.stringify({ name }) }), 201)).id as string;
  const storedObjects = async (id: string) => {
    const keys: string[] = [];
    for await (const o of server.deps.objects.list(`${id}/`)) keys.push(o.key);
    return keys;
  };
  const versionsOf = async (id: string) => (await json(await owner.api(`/datasets/${id}/versions`), 200)).versions.map((v: { version: string }) => v.version);
  /** `nds <args>` on a pseudo-terminal (util-linux `script`), typing `input`; stdout and stderr together. */
  const onTerminal = (args: string[], input: string) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const command = [process.execPath, 'bin/nds.js', ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
      const child = spawn('script', ['-qec', command, '/dev/null'], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => {
        output += d;
        if (/\[y\/N\]/.test(output) && !child.stdin.writableEnded) child.stdin.end(input);
      });
      child.stderr.on('data', (d) => (output += d));
      child.on('close', (code) => resolve({ code, output }));
    });
  const bidsCopy = (name: string) => {
    const dir = path.join(tmp, name);
    cpSync(path.join(fixtures, 'bids/emg_CustomBipolar'), dir, { recursive: true });
    return dir;
  };

  it('refuses a folder that is not a BIDS dataset, sending nothing', async () => {
    const id = await newDataset('Not BIDS');
    const folder = path.join(tmp, 'notes');
    mkdirSync(folder);
    writeFileSync(path.join(folder, 'notes.txt'), 'just some notes\n');
    const r = await nds(['datasets', 'upload', id, folder], env);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /error: no dataset_description\.json at the top of the folder/);
    assert.match(r.stderr, /nothing was sent: .* is not a BIDS dataset nds can take \(1 error above\)\. Fix them, or pass --force/);
    assert.deepEqual(await storedObjects(id), []);
    assert.deepEqual(await versionsOf(id), []);
  });

  it('lists what --dry-run would change and sends nothing', async () => {
    const id = await newDataset('Dry run');
    const folder = bidsCopy('dry');
    const r = await nds(['datasets', 'upload', id, folder, '--dry-run'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /dry run: nothing was sent\. Against an empty dataset: 7 added, 0 changed, 0 removed/);
    assert.match(r.stdout, /^added {4}sub-01\/emg\/sub-01_task-holdWeight_emg\.edf$/m);
    assert.deepEqual(await storedObjects(id), []);
    assert.deepEqual(await versionsOf(id), []);
  });

  it('converts with --wait, makes no version for the same folder again, and asks before dropping files', async () => {
    const id = await newDataset('Custom bipolar');
    const folder = bidsCopy('bipolar');
    const first = await nds(['datasets', 'upload', id, folder, '--wait'], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^converted {2}sub-01\/emg\/sub-01_task-holdWeight_emg\.edf: 1 group, \d+ channels?, [\d.]+ s$/m);
    assert.deepEqual(await versionsOf(id), ['1.0.0']);

    const again = await nds(['datasets', 'upload', id, folder], env);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /no change: the folder holds exactly the files of version 1\.0\.0; no version was made/);
    assert.deepEqual(await versionsOf(id), ['1.0.0']);

    const dry = await nds(['datasets', 'upload', id, folder, '--dry-run'], env);
    assert.match(dry.stderr, /Against version 1\.0\.0: 0 added, 0 changed, 0 removed/);

    rmSync(path.join(folder, 'participants.json'));
    const refused = await nds(['datasets', 'upload', id, folder], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /nothing was sent: this folder lacks 1 file that version 1\.0\.0 has.*Pass --yes/);
    assert.deepEqual(await versionsOf(id), ['1.0.0']);
    // On a terminal the CLI asks: "n" keeps the latest version, "y" makes the new one.
    const no = await onTerminal(['datasets', 'upload', id, folder], 'n\n');
    assert.match(no.output, /lacks 1 file that version 1\.0\.0 has[^]*participants\.json[^]*Make the version without them\? \[y\/N\]/);
    assert.notEqual(no.code, 0);
    assert.deepEqual(await versionsOf(id), ['1.0.0']);
    const yes = await onTerminal(['datasets', 'upload', id, folder], 'y\n');
    assert.equal(yes.code, 0, yes.output);
    assert.deepEqual(await versionsOf(id), ['1.0.1', '1.0.0']);

    rmSync(path.join(folder, 'README.md'));
    const dropped = await nds(['datasets', 'upload', id, folder, '--yes'], env);
    assert.equal(dropped.code, 0, dropped.stderr);
    assert.deepEqual(await versionsOf(id), ['1.0.2', '1.0.1', '1.0.0']);
  });

  it('refuses a truncated EDF before sending, and with --force --wait exits 1 printing its reason', async () => {
    const id = await newDataset('Truncated');
    const folder = bidsCopy('truncated');
    const edf = path.join(folder, 'sub-01/emg/sub-01_task-holdWeight_emg.edf');
    truncateSync(edf, readFileSync(edf).length - 1000);
    const refused = await nds(['datasets', 'upload', id, folder, '--wait'], env);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /error: sub-01\/emg\/sub-01_task-holdWeight_emg\.edf: is truncated/);
    assert.deepEqual(await storedObjects(id), []);

    const forced = await nds(['datasets', 'upload', id, folder, '--force', '--wait'], env);
    assert.equal(forced.code, 1, forced.stderr);
    assert.match(forced.stdout, /^failed {5}sub-01\/emg\/sub-01_task-holdWeight_emg\.edf: corrupt_or_truncated: .*is truncated/m);
    assert.match(forced.stderr, /1 of 1 recordings failed to convert/);
    assert.deepEqual(await versionsOf(id), ['1.0.0']);
  });

  it('says what is wrong with a missing folder and an invalid id, in one sentence', async () => {
    const id = await newDataset('Missing');
    const missing = await nds(['datasets', 'upload', id, path.join(tmp, 'no-such-folder')], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^nds: There is no folder .*no-such-folder; give the path of the dataset's root folder/);
    assert.doesNotMatch(missing.stderr, /ENOENT|scandir/);
    const foo = await nds(['datasets', 'show', 'foo'], env);
    assert.equal(foo.code, 1);
    assert.match(foo.stderr, /^nds: "foo" is not a valid dataset id: ids look like nd000001/);
  });
});
