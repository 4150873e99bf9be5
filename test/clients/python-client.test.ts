/**
 * Runs the Python client's tests (clients/python/tests, pytest) against a real server holding EDF, BDF,
 * BrainVision (test fixtures) and EEGLAB (written by the test MAT writer) recordings; the tests compare windows with python3-mne's
 * reading of the same files and run a torch DataLoader with two spawned workers.
 */
// test.sh: embedded pass only. What this file checks happens in the client (a command's output, its files, its
// retries); the routes it calls have their database work run on PostgreSQL by the HTTP tests.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { convertedDataset, fixtures, makeRepo } from '../recordings/support.js';
import { eeglabSet } from '../recordings/eeglab-fixture.js';

const python = '/usr/bin/python3';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const missing = !existsSync(python)
  ? `${python} is not installed`
  : (() => {
      try {
        execFileSync(python, ['-c', 'import numpy, pytest'], { stdio: 'ignore' });
        return undefined;
      } catch {
        return 'python3-numpy or python3-pytest is not installed (apt install python3-numpy python3-pytest python3-torch python3-mne)';
      }
    })();

const EVENTS = 'onset\tduration\ttrial_type\n1.0\t0\tleft\n2.0\t0\tright\n';

describe('the Python client (clients/python), with pytest against a live server', { skip: missing ?? false }, () => {
  let server: TestServer;
  const repos: string[] = [];
  const env: Record<string, string> = {};

  before(async () => {
    server = await startTestServer();
    const owner = await createAccount(server);
    const sources: Record<string, string> = {
      'sub-01/eeg/sub-01_task-game_eeg.edf': path.join(fixtures, 'mne-python/edf/test.edf'),
      'sub-02/eeg/sub-02_task-game_eeg.bdf': path.join(fixtures, 'mne-python/edf/test.bdf'),
      'sub-03/eeg/sub-03_task-game_eeg.vhdr': path.join(fixtures, 'mne-python/brainvision/test.vhdr'),
      'sub-04/eeg/sub-04_task-game_eeg.edf': path.join(fixtures, 'mne-python/edf/test.edf'),
    };
    const setDir = mkdtempSync(path.join(os.tmpdir(), 'nds-py-set-'));
    repos.push(setDir);
    const setFile = path.join(setDir, 'test.set');
    writeFileSync(setFile, eeglabSet());
    const placed = Object.entries(sources).map(([to, from]) => ({ from: path.relative(fixtures, from), to, events: EVENTS }));
    sources['sub-05/eeg/sub-05_task-game_eeg.set'] = setFile;
    const repo = makeRepo([...placed, { bytes: eeglabSet(), to: 'sub-05/eeg/sub-05_task-game_eeg.set', events: EVENTS }]);
    const priv = makeRepo([{ from: 'mne-python/edf/test.edf', to: 'sub-01/eeg/sub-01_task-game_eeg.edf' }]);
    repos.push(repo, priv);
    Object.assign(env, {
      NDS_TEST_URL: server.url,
      NDS_TEST_DATASET: await convertedDataset(server, owner.user.id, repo),
      NDS_TEST_PRIVATE_DATASET: await convertedDataset(server, owner.user.id, priv, 'private'),
      NDS_TEST_KEY: owner.key,
      NDS_TEST_SOURCES: JSON.stringify(sources),
    });
  });
  after(async () => {
    await server.close();
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  it('passes python3 -m pytest clients/python/tests', async () => {
    // Asynchronous: the server answering the tests runs in this process.
    const child = spawn(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'clients/python/tests'], { cwd: root, env: { ...process.env, ...env, PYTHONPATH: path.join(root, 'clients/python') } });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, output);
    assert.match(output, /passed/);
    assert.doesNotMatch(output, /skipped/, output);
  });
});
