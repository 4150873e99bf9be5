/**
 * Every worker on one dataset (decision 0024): a job's recordings are tasks that any worker takes, and the
 * copy two workers make is the copy one worker makes, object for object. The index is written once, after
 * the last task; a later push converts only the recordings it changed.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { startWorker, type RunningWorker } from '../../src/conversion/worker.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { gitIn, hostedSource, hostRepository } from './support.js';

const RECORDINGS = 8;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function recording(seed: number): Uint8Array {
  const signals = Array.from({ length: 8 }, (_, c) => {
    const samples = new Int16Array(30 * 500);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(2000 * Math.sin((i * (c + seed)) / 40));
    return { label: `EEG${c + 1}`, samplesPerRecord: 500, samples };
  });
  return writeEdf({ recordDuration: 1, records: 30, signals });
}

function makeRepo(root: string): string {
  const dir = path.join(root, `tasks-source`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'dataset_description.json'), JSON.stringify({ Name: 'tasks', BIDSVersion: '1.9.0' }));
  // Sidecars the recordings inherit from higher up the tree (BIDS inheritance): a worker must fetch them too.
  writeFileSync(path.join(dir, 'task-rest_eeg.json'), JSON.stringify({ TaskName: 'rest', PowerLineFrequency: 50 }));
  for (let s = 1; s <= RECORDINGS; s++) {
    const sub = path.join(dir, `sub-0${s}`, 'eeg');
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `sub-0${s}_task-rest_eeg.edf`), recording(s));
    writeFileSync(path.join(dir, `sub-0${s}`, `sub-0${s}_task-rest_events.tsv`), `onset\tduration\ttrial_type\n${s}\t0\tblink\n`);
  }
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'recordings');
  return dir;
}

describe('a conversion job split into recording tasks', { timeout: 300_000 }, () => {
  let server: TestServer;
  let repo: string;
  const id = 'nd000241';
  let frozenAt = Date.now();

  before(async () => {
    // When the suite runs, not when its file was loaded (a group of test files loads them long before): the
    // fetch credential a worker signs at this time lives 300 s.
    frozenAt = Date.now();
    // No worker inside the server: the test runs its own.
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    const owner = await createAccount(server, { role: 'admin' });
    repo = hostRepository(server.config.gitDir, id, makeRepo(server.dataDir));
    await insertDatasetRows(server.deps.db, { id, name: 'Tasks', owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(() => server.close());

  /** Every object of the copy, key → bytes. */
  async function copy(): Promise<Map<string, Buffer>> {
    const out = new Map<string, Buffer>();
    for await (const o of server.deps.objects.list(`${id}/zarr/`)) out.set(o.key, (await server.deps.objects.readAll(o.key))!);
    return out;
  }

  /** Converts the dataset with `n` workers (from scratch when `full`); returns the job's tasks. */
  async function convert(n: number, full: boolean) {
    const { job } = await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full, reason: 'test' });
    // One fixed time for every run, so the timestamps written into the copy are the same too: the time the
    // test began, so the fetch credential a worker signs with it is still valid where the server checks it.
    const deps = { ...server.deps, clock: { now: () => new Date(frozenAt) } };
    const workers: RunningWorker[] = Array.from({ length: n }, () => startWorker(deps, { pollMs: 10 }));
    try {
      const deadline = Date.now() + 240_000;
      for (;;) {
        const row = await server.deps.db.selectFrom('conversion_jobs').select(['state', 'error']).where('id', '=', job.id).executeTakeFirstOrThrow();
        if (row.state === 'done') break;
        assert.notEqual(row.state, 'failed', row.error ?? '');
        assert.ok(Date.now() < deadline, 'the job finished in time');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    return server.deps.db.selectFrom('conversion_tasks').selectAll().where('job_id', '=', job.id).orderBy('position').execute();
  }

  it('converted by two workers equals the same dataset converted by one, object for object', async () => {
    const byOneTasks = await convert(1, true);
    assert.equal(byOneTasks.length, RECORDINGS);
    const byOne = await copy();
    assert.equal(JSON.parse(byOne.get(`${id}/zarr/index.json`)!.toString()).store_count, RECORDINGS);

    await server.deps.objects.deletePrefix(`${id}/zarr/`);
    const byTwoTasks = await convert(2, true);
    assert.equal(byTwoTasks.length, RECORDINGS);
    assert.equal(new Set(byTwoTasks.map((t) => t.worker_id)).size, 2, 'both workers converted recordings of the one dataset');
    assert.ok(byTwoTasks.every((t) => t.state === 'done' && t.attempts === 1));
    const byTwo = await copy();

    assert.deepEqual([...byTwo.keys()].sort(), [...byOne.keys()].sort());
    for (const [key, bytes] of byOne) assert.equal(sha256(byTwo.get(key)!), sha256(bytes), `${key} is the same`);
    // Each store was made with the sidecars it inherits, fetched by whichever worker converted it.
    for (let s = 1; s <= RECORDINGS; s++) {
      const root = byTwo.get(`${id}/zarr/sub-0${s}/eeg/sub-0${s}_task-rest_eeg.zarr/zarr.json`)!.toString();
      assert.match(root, /task-rest_eeg\.json/);
      assert.match(root, new RegExp(`sub-0${s}_task-rest_events\\.tsv`));
    }
  });

  it('a later commit makes tasks only of the recordings it changed', async () => {
    writeFileSync(path.join(repo, 'sub-03/eeg/sub-03_task-rest_eeg.edf'), recording(33));
    gitIn(repo, 'commit', '-q', '-am', 'one recording changed');
    const tasks = await convert(2, false);
    assert.deepEqual(
      tasks.map((t) => t.path),
      ['sub-03/eeg/sub-03_task-rest_eeg.edf'],
    );
    const index = JSON.parse((await server.deps.objects.readAll(`${id}/zarr/index.json`))!.toString());
    assert.equal(index.source_commit, gitIn(repo, 'rev-parse', 'HEAD'));
    assert.equal(index.store_count, RECORDINGS);
  });

  it('converts again a store that a job which never published wrote in place, though its source did not change', async () => {
    // A job of a later commit converted sub-05 in place and was then given up (or lost and superseded): the
    // copy's index is still of HEAD, and sub-05's store holds what that job wrote.
    const store = `${id}/zarr/sub-05/eeg/sub-05_task-rest_eeg.zarr/zarr.json`;
    const published = (await server.deps.objects.readAll(store))!;
    const ended = new Date(frozenAt);
    const lost = await server.deps.db
      .insertInto('conversion_jobs')
      .values({ dataset_id: id, ref: 'f'.repeat(40), state: 'failed', reason: 'push', worker_id: null, started_at: ended, heartbeat_at: ended, finished_at: ended, result: null, error: 'The conversion stopped its worker 3 times', plan: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    const task = { job_id: lost.id, path: 'sub-05/eeg/sub-05_task-rest_eeg.edf', zarr: 'sub-05/eeg/sub-05_task-rest_eeg.zarr', worker_id: null, started_at: ended, heartbeat_at: null, finished_at: ended, store: null, failure: null };
    // One task ran (it wrote the store), another never started (it wrote nothing and is not converted again).
    await server.deps.db.insertInto('conversion_tasks').values([
      { ...task, position: 4, state: 'done', attempts: 1, error: null },
      { ...task, position: 5, path: 'sub-06/eeg/sub-06_task-rest_eeg.edf', zarr: 'sub-06/eeg/sub-06_task-rest_eeg.zarr', state: 'failed', attempts: 0, error: 'cancelled' },
    ]).execute();
    await server.deps.objects.put(store, Buffer.from('{"written by a job that never published": true}'));

    const tasks = await convert(1, false);
    assert.deepEqual(tasks.map((t) => t.path), ['sub-05/eeg/sub-05_task-rest_eeg.edf']);
    // The store is the source's again: as published, but for the commit it was converted from (HEAD, now).
    const again = JSON.parse((await server.deps.objects.readAll(store))!.toString());
    const before = JSON.parse(published.toString());
    assert.equal(again.attributes.source.commit, gitIn(repo, 'rev-parse', 'HEAD'));
    before.attributes.source.commit = again.attributes.source.commit;
    assert.deepEqual(again, before);
    // Published now: the next job converts nothing.
    assert.deepEqual(await convert(1, false), []);
  });
});

