/**
 * A queue that gives up: a recording whose conversion makes the worker process exit is started
 * CONVERSION_MAX_ATTEMPTS (3) times, then shows failed (a failure of the index, with the reason), while
 * another dataset converts meanwhile and the poisoned dataset's other recordings are published. Real
 * `nds worker` processes, restarted as a supervisor (systemd's Restart=always) would: two at once on the
 * PostgreSQL server (the suite's PostgreSQL pass), one at a time on embedded PGlite (one process only).
 *
 * What makes the process exit is the test itself: it kills (SIGKILL) any worker the moment it logs that it
 * started the poisoned recording, which is what an out-of-memory kill or a crash of a native decoder does.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createUser } from '../../src/accounts/users.js';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { loadConfig } from '../../src/core/config.js';
import { connectDatabase } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { readStoreIndex } from '../../src/formats/zarr/store-index-object.js';
import { openObjectStore } from '../../src/objects/open-object-store.js';
import { startNds, type CliRun } from '../support/cli.js';
import { insertDatasetRows } from '../support/datasets.js';
import { createPostgresTestDatabase, pgliteDump, usingPostgres } from '../support/test-server.js';
import { hostRepository, hostedSource, makeEdfRepo, startRepositoryNode, type RepositoryNode } from './support.js';

const poisoned = 'nd000251';
const healthy = 'nd000252';
const POISON_PATH = 'sub-02/eeg/sub-02_task-rest_eeg.edf';

describe('a recording that makes the worker process exit', { timeout: 300_000 }, () => {
  let root: string;
  let env: Record<string, string>;
  let dropDatabase: (() => Promise<void>) | undefined;
  let node: RepositoryNode | undefined;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'nds-poison-'));
    const dataDir = path.join(root, 'data');
    let databaseUrl = `pglite:${path.join(dataDir, 'db')}`;
    if (usingPostgres) ({ url: databaseUrl, drop: dropDatabase } = await createPostgresTestDatabase());
    const secret = 'poison-test-signing-secret';
    // The workers fetch the hosted repositories over HTTP from the node that holds them (decision 0026).
    node = await startRepositoryNode(path.join(dataDir, 'git'), { dataDir, objectSigningSecret: secret });
    env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', CONVERSION_MAX_ATTEMPTS: '3', NODE_URL: node.url, OBJECT_SIGNING_SECRET: secret };
    hostRepository(path.join(dataDir, 'git'), poisoned, makeEdfRepo(root, 'poisoned', { subjects: 2, seconds: 20, channels: 16, rate: 500 }));
    hostRepository(path.join(dataDir, 'git'), healthy, makeEdfRepo(root, 'healthy', { subjects: 4, seconds: 30, channels: 16, rate: 500 }));
    const database = await connectDatabase(databaseUrl, { pgliteDump: usingPostgres ? undefined : await pgliteDump() });
    try {
      await migrateToLatest(database.db);
      const owner = await createUser(database.db, { username: 'poison-owner', email: 'poison@example.org', status: 'approved', role: 'admin', kind: 'person' }, new Date());
      await insertDatasetRows(database.db, { id: poisoned, name: 'Poisoned', owner_id: owner.id, visibility: 'public', source_repo: hostedSource });
      await insertDatasetRows(database.db, { id: healthy, name: 'Healthy', owner_id: owner.id, visibility: 'public', source_repo: hostedSource });
      // The poisoned dataset is queued first: it must not hold the other back.
      await enqueueConversion(database.db, { datasetId: poisoned, ref: 'main', full: false, reason: 'test' });
      await enqueueConversion(database.db, { datasetId: healthy, ref: 'main', full: false, reason: 'test' });
    } finally {
      await database.close();
    }
  });
  after(async () => {
    await node?.close();
    await dropDatabase?.();
    await rm(root, { recursive: true, force: true });
  });

  it('is started 3 times, then shows failed, while another dataset converts meanwhile', async (t) => {
    const slots = usingPostgres ? 2 : 1;
    let kills = 0;
    /** At which kill the healthy dataset's job had been planned (it converts from then on). */
    let healthyStartedAtKill: number | undefined;
    const plannedLines: string[] = [];
    const running = new Set<CliRun>();
    const finishedLines: string[] = [];
    let stopping = false;

    /** A worker that is killed when it starts the poisoned recording, and replaced, like a supervisor would. */
    const supervise = (): Promise<void> => {
      const run = startNds(['worker'], env);
      running.add(run);
      let partial = '';
      run.child.stdout!.on('data', (d: Buffer) => {
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const line of lines) {
          if (line.includes('"msg":"conversion finished"')) finishedLines.push(line);
          if (line.includes('"msg":"conversion planned"')) plannedLines.push(line);
          if (line.includes('"msg":"recording conversion started"') && line.includes(POISON_PATH) && line.includes(poisoned)) {
            kills++;
            if (plannedLines.some((l) => l.includes(healthy))) healthyStartedAtKill ??= kills;
            run.child.kill('SIGKILL');
          }
        }
      });
      return run.done.then((result) => {
        running.delete(run);
        if (!stopping && result.code === null) return supervise();
        if (!stopping) throw new Error(`a worker exited by itself (${result.code}): ${result.stderr.slice(-2000)}`);
      });
    };

    const database = await connectDatabase(env.DATABASE_URL!, { pgliteDump: undefined });
    const supervisors: Array<Promise<void>> = [];
    const jobOf = async (db: typeof database.db, id: string) =>
      (await db.selectFrom('conversion_jobs').select(['state', 'attempts', 'error', 'finished_at']).where('dataset_id', '=', id).orderBy('id', 'desc').executeTakeFirst())!;
    try {
      if (usingPostgres) for (let i = 0; i < slots; i++) supervisors.push(supervise());
      else {
        // PGlite: one process holds the database at a time; the test reads it only between runs.
        await database.close();
        supervisors.push(supervise());
      }
      const deadline = Date.now() + 240_000;
      // The poisoned dataset's job ends once its recording was given up and the rest published; the healthy
      // one's when its four recordings are converted (on a busy machine, that may be after the other's end).
      while (!finishedLines.some((l) => l.includes(poisoned)) || !finishedLines.some((l) => l.includes(healthy))) {
        assert.ok(Date.now() < deadline, `both jobs ended in time (kills so far: ${kills})`);
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      stopping = true;
      for (const run of running) run.child.kill('SIGTERM');
      await Promise.allSettled(supervisors);
    }

    const check = usingPostgres ? database : await connectDatabase(env.DATABASE_URL!);
    const config = loadConfig(env);
    const objects = await openObjectStore(config.objectStoreUrl, config);
    try {
      t.diagnostic(`${slots} worker slot(s); workers killed on the poisoned recording: ${kills}; the healthy dataset was converting by kill ${healthyStartedAtKill}`);
      assert.equal(kills, 3, 'the poisoned recording was started exactly 3 times');
      // Meanwhile: the healthy dataset's conversion had begun before the poisoned recording's last attempt, not
      // held back until the poisoned one was given up.
      assert.ok(healthyStartedAtKill !== undefined && healthyStartedAtKill <= 3, 'the other dataset converted while the poisoned one was retried');

      const task = await check.db
        .selectFrom('conversion_tasks')
        .innerJoin('conversion_jobs', 'conversion_jobs.id', 'conversion_tasks.job_id')
        .select(['conversion_tasks.state', 'conversion_tasks.attempts'])
        .where('conversion_jobs.dataset_id', '=', poisoned)
        .where('conversion_tasks.path', '=', POISON_PATH)
        .executeTakeFirstOrThrow();
      assert.equal(task.state, 'failed');
      assert.equal(task.attempts, 3);
      const index = await readStoreIndex(objects, poisoned);
      assert.ok(index);
      assert.deepEqual(index.stores.map((s) => s.path), ['sub-01/eeg/sub-01_task-rest_eeg.edf'], 'the other recording of the dataset was published');
      assert.equal(index.failures.length, 1);
      assert.equal(index.failures[0].path, POISON_PATH);
      assert.match(index.failures[0].reason, /stopped its worker 3 times/);

      const ds = (id: string) => check.db.selectFrom('datasets').select(['zarr_status', 'zarr_store_count']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(await ds(poisoned), { zarr_status: 'ready', zarr_store_count: 1 });
      assert.deepEqual(await ds(healthy), { zarr_status: 'ready', zarr_store_count: 4 });
      assert.equal((await jobOf(check.db, healthy)).state, 'done');
      assert.equal((await jobOf(check.db, poisoned)).state, 'done');
    } finally {
      await check.close();
      await objects.close();
    }
  });
});
