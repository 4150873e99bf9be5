/**
 * A conversion killed mid-run (kill -9 of `nds worker`) resumes as soon as the worker is started again on the
 * same data: the new process takes the job back from its dead predecessor at once (not after the lease),
 * the copy is ready within 30 s of the restart, and `index.json` lists exactly the stores in the object store.
 * On embedded PGlite (a folder), and on the PostgreSQL server in the suite's PostgreSQL pass.
 * Then, on the PostgreSQL server only (two processes share a queue there): two workers convert the next
 * commit together, one is killed mid-way, the previous copy stays readable, and the other finishes the job.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
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
import { writeEdf } from '../formats/support/edf-writer.js';
import { gitIn, hostedSource, hostRepository, startRepositoryNode, type RepositoryNode } from './support.js';

const RECORDINGS = 4;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const id = 'nd000777';

/** An EDF of 32 channels, 120 s at 1000 Hz (about 7.7 MB): its conversion takes a moment, so it can be cut. */
function recording(seed: number): Uint8Array {
  const records = 120;
  const rate = 1000;
  const signals = Array.from({ length: 32 }, (_, c) => {
    const samples = new Int16Array(records * rate);
    let noise = seed * 7919 + c;
    for (let i = 0; i < samples.length; i++) {
      noise = (noise * 1103515245 + 12345) & 0x7fffffff;
      samples[i] = Math.round(3000 * Math.sin((i * (c + 1)) / 50) + ((noise >> 8) % 2000) - 1000);
    }
    return { label: `EEG${c + 1}`, samplesPerRecord: rate, samples };
  });
  return writeEdf({ recordDuration: 1, records, signals });
}

/** A BIDS repository of `RECORDINGS` recordings, committed on main. */
function makeRepo(root: string): string {
  const dir = path.join(root, 'source');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'dataset_description.json'), JSON.stringify({ Name: 'restart test', BIDSVersion: '1.9.0' }));
  for (let s = 1; s <= RECORDINGS; s++) {
    const sub = path.join(dir, `sub-0${s}`, 'eeg');
    mkdirSync(sub, { recursive: true });
    writeFileSync(path.join(sub, `sub-0${s}_task-rest_eeg.edf`), recording(s));
  }
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'recordings');
  return dir;
}

/** Every stdout line of a run with the time it arrived, collected from the start so no line is missed. */
const runLogs = new WeakMap<CliRun, Array<{ line: string; at: number }>>();
function linesOf(run: CliRun): Array<{ line: string; at: number }> {
  let lines = runLogs.get(run);
  if (!lines) {
    const collected: Array<{ line: string; at: number }> = [];
    let partial = '';
    run.child.stdout!.on('data', (d: Buffer) => {
      const parts = (partial + d.toString()).split('\n');
      partial = parts.pop()!;
      for (const line of parts) collected.push({ line, at: performance.now() });
    });
    runLogs.set(run, (lines = collected));
  }
  return lines;
}

/**
 * Resolves with the time a JSON log line with `msg` appeared on the run's stdout, also when it came before
 * this call (two lines often arrive in one chunk).
 */
function logged(run: CliRun, msg: string, timeoutMs: number): Promise<number> {
  const lines = linesOf(run);
  const deadline = performance.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const look = () => {
      const hit = lines.find((l) => l.line.includes(`"msg":"${msg}"`));
      if (hit) return resolve(hit.at);
      if (performance.now() > deadline) return reject(new Error(`no "${msg}" within ${timeoutMs} ms: ${lines.map((l) => l.line).join('\n').slice(-2000)}`));
      setTimeout(look, 10);
    };
    look();
  });
}

describe('a conversion killed mid-run', { timeout: 180_000 }, () => {
  let root: string;
  let env: Record<string, string>;
  let dropDatabase: (() => Promise<void>) | undefined;
  let node: RepositoryNode;
  let repo: string;

  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'nds-restart-'));
    const dataDir = path.join(root, 'data');
    let databaseUrl = `pglite:${path.join(dataDir, 'db')}`;
    if (usingPostgres) ({ url: databaseUrl, drop: dropDatabase } = await createPostgresTestDatabase());
    const secret = 'restart-test-signing-secret';
    // The worker fetches the hosted repository over HTTP from the node that holds it (decision 0026).
    node = await startRepositoryNode(path.join(dataDir, 'git'), { dataDir, objectSigningSecret: secret });
    env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', NODE_URL: node.url, OBJECT_SIGNING_SECRET: secret };
    repo = hostRepository(path.join(dataDir, 'git'), id, makeRepo(root));
    const database = await connectDatabase(databaseUrl, { pgliteDump: usingPostgres ? undefined : await pgliteDump() });
    try {
      await migrateToLatest(database.db);
      const owner = await createUser(database.db, { username: 'restart-owner', email: 'restart@example.org', status: 'approved', role: 'admin', kind: 'person' }, new Date());
      await insertDatasetRows(database.db, { id, name: 'Restart test', owner_id: owner.id, visibility: 'public', source_repo: hostedSource });
      await enqueueConversion(database.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    } finally {
      await database.close();
    }
  });
  after(async () => {
    await node?.close();
    await dropDatabase?.();
    await rm(root, { recursive: true, force: true });
  });

  it('runs again within seconds of the restart, is ready within 30 s, and its index.json lists exactly the stores present', async (t) => {
    const config = loadConfig(env);
    const objects = await openObjectStore(config.objectStoreUrl, config);
    const keys = async () => {
      const out: string[] = [];
      for await (const o of objects.list(`${id}/zarr/`)) out.push(o.key);
      return out;
    };

    // First run: killed once the conversion has written some of the copy, before it finished.
    const first = startNds(['worker'], env);
    linesOf(first);
    await logged(first, 'conversion started', 60_000);
    const deadline = Date.now() + 60_000;
    while ((await keys()).length < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.code, null, 'killed, not exited');
    assert.doesNotMatch(killed.stdout, /"msg":"conversion finished"/, 'the conversion was cut mid-run');
    const written = await keys();
    assert.ok(written.length >= 20, `the first run wrote ${written.length} objects before it was killed`);
    assert.ok(!written.includes(`${id}/zarr/index.json`), 'no index.json yet');

    // Second run on the same data: the job of the dead process is taken back at once.
    const restarted = performance.now();
    const second = startNds(['worker'], env);
    linesOf(second);
    try {
      const up = await logged(second, 'conversion worker started', 30_000);
      const resumed = await logged(second, 'conversion started', 30_000);
      const finished = await logged(second, 'conversion finished', Math.max(1, 30_000 - (performance.now() - restarted)));
      t.diagnostic(
        `worker up ${s(up - restarted)} after the restart, job running again ${s(resumed - up)} later, ready ${s(finished - restarted)} after the restart (lease ${config.conversionLeaseS} s)`,
      );
      // Well inside the lease: the job was taken back from the dead process, not after its heartbeat aged.
      assert.ok(resumed - up < 5000, `the job ran again only ${s(resumed - up)} after the worker was up`);
      assert.ok(finished - restarted < 30_000);
    } finally {
      second.child.kill('SIGTERM');
      await second.done;
    }

    // The copy is ready, and index.json lists exactly the stores in the object store.
    const index = await readStoreIndex(objects, id);
    assert.ok(index, 'index.json was written');
    const listed = index.stores.map((s) => s.zarr).sort();
    const present = [...new Set((await keys()).filter((k) => k.endsWith('.zarr/zarr.json')).map((k) => k.slice(`${id}/zarr/`.length, -'/zarr.json'.length)))].sort();
    assert.deepEqual(listed, present);
    assert.deepEqual(present, Array.from({ length: RECORDINGS }, (_, i) => `sub-0${i + 1}/eeg/sub-0${i + 1}_task-rest_eeg.zarr`));
    assert.equal(index.failures.length, 0);

    const database = await connectDatabase(env.DATABASE_URL!);
    try {
      const dataset = await database.db.selectFrom('datasets').select(['zarr_status', 'zarr_store_count']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(dataset, { zarr_status: 'ready', zarr_store_count: RECORDINGS });
      const jobs = await database.db.selectFrom('conversion_jobs').select(['state', 'attempts']).where('dataset_id', '=', id).execute();
      assert.deepEqual(jobs, [{ state: 'done', attempts: 2 }]);
    } finally {
      await database.close();
      await objects.close();
    }
  });
  it(
    'two workers on one dataset: one killed mid-way leaves the previous copy readable, and the other finishes the job',
    { skip: usingPostgres ? false : 'two worker processes share a queue on a PostgreSQL server only (the suite runs this in its PostgreSQL pass)' },
    async () => {
      const config = loadConfig(env);
      const objects = await openObjectStore(config.objectStoreUrl, config);
      const database = await connectDatabase(env.DATABASE_URL!);
      const workers: CliRun[] = [];
      try {
        const previous = (await objects.readAll(`${id}/zarr/index.json`))!;
        const previousStores = JSON.parse(previous.toString()).stores as Array<{ zarr: string }>;
        for (let s = 1; s <= RECORDINGS; s++) writeFileSync(path.join(repo, `sub-0${s}/eeg/sub-0${s}_task-rest_eeg.edf`), recording(s + 10));
        gitIn(repo, 'commit', '-q', '-am', 'every recording again');
        const commit = gitIn(repo, 'rev-parse', 'HEAD');
        const { job } = await enqueueConversion(database.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });

        workers.push(startNds(['worker'], env), startNds(['worker'], env));
        workers.forEach(linesOf);
        // The first worker to start a recording is killed while it converts it.
        const victim = await Promise.any(workers.map((w) => logged(w, 'recording conversion started', 60_000).then(() => w)));
        victim.child.kill('SIGKILL');
        assert.equal((await victim.done).code, null, 'killed, not exited');
        // The copy readers see is still the previous one, whole: its index and each store it names.
        assert.ok((await objects.readAll(`${id}/zarr/index.json`))!.equals(previous), 'index.json is the previous one');
        for (const store of previousStores) assert.ok(await objects.readAll(`${id}/zarr/${store.zarr}/zarr.json`), `${store.zarr} is readable`);

        const deadline = Date.now() + 60_000;
        for (;;) {
          const row = await database.db.selectFrom('conversion_jobs').select(['state', 'error']).where('id', '=', job.id).executeTakeFirstOrThrow();
          if (row.state === 'done') break;
          assert.notEqual(row.state, 'failed', row.error ?? '');
          assert.ok(Date.now() < deadline, 'the other worker finished the job within 60 s');
          await new Promise((r) => setTimeout(r, 50));
        }
        const index = await readStoreIndex(objects, id);
        assert.equal(index?.source_commit, commit);
        assert.equal(index?.failures.length, 0);
        assert.deepEqual(index?.stores.map((s) => s.zarr).sort(), previousStores.map((s) => s.zarr).sort());
        const tasks = await database.db.selectFrom('conversion_tasks').select(['state', 'attempts']).where('job_id', '=', job.id).execute();
        assert.equal(tasks.length, RECORDINGS, 'only the changed recordings, all of them');
        assert.ok(tasks.every((t) => t.state === 'done'));
      } finally {
        for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.done));
        await database.close();
        await objects.close();
      }
    },
  );
});
