/**
 * A rolling upgrade on one PostgreSQL: the previous release's `nds serve` (a git worktree of an earlier
 * commit, run from a temporary folder) migrates an empty database and serves; the new release starts beside it
 * and migrates the rest; then an even newer release's expand migration lands. The old process keeps
 * answering throughout, and restarts against the newer schema. The previous release's `nds worker` converts
 * on that schema, alone and beside the new release's worker.
 *
 * The previous release is HEAD~1, or NDS_UPGRADE_FROM; a commit older than the acceptance of unknown newer
 * migrations (2026-11-27-2300-schema-requirements) is replaced by the first commit that has it, since such a
 * release cannot take part in a rolling upgrade.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createUser } from '../../src/accounts/users.js';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { loadConfig } from '../../src/core/config.js';
import { createLogger } from '../../src/core/log.js';
import { connectDatabase } from '../../src/db/connect.js';
import { readStoreIndex } from '../../src/formats/zarr/store-index-object.js';
import { openObjectStore } from '../../src/objects/open-object-store.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { hostedSource, hostRepository, makeEdfRepo, startRepositoryNode, type RepositoryNode } from '../conversion/support.js';
import { startNds, type CliRun } from '../support/cli.js';
import { insertDatasetRows } from '../support/datasets.js';
import { freePort, usingPostgres } from '../support/test-server.js';

const git = async (...args: string[]) => (await promisify(execFile)('git', args)).stdout.trim();
const TOLERANT = 'src/db/migrations/2026-11-27-2300-schema-requirements.ts';

/** The commit of the previous release: one that accepts migrations it does not know. */
async function previousRelease(): Promise<string> {
  const wanted = await git('rev-parse', process.env.NDS_UPGRADE_FROM ?? 'HEAD~1');
  const hasIt = await git('cat-file', '-e', `${wanted}:${TOLERANT}`).then(() => true, () => false);
  return hasIt ? wanted : (await git('log', '--diff-filter=A', '--format=%H', '--', TOLERANT)).split('\n').at(-1)!;
}

/** Starts `nds serve` of the tree at `root`; resolves once it listens. */
function startOld(root: string, env: Record<string, string>): Promise<{ child: ChildProcess; exited: Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, [path.join(root, 'bin/nds.js'), 'serve'], { cwd: root, env: { ...process.env, ...env, NDS_SERVE_LAUNCHER: 'off' }, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let text = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (c: Buffer) => {
      text += c.toString();
      if (/nds is listening/.test(text)) resolve({ child, exited, stderr: () => text });
    });
    void exited.then((code) => reject(new Error(`the previous release exited (${code}): ${text}`)));
  });
}

const answers = async (base: string) => {
  const ready = await fetch(`${base}/readyz`);
  const list = await fetch(`${base}/datasets`, { headers: { accept: 'application/json' } });
  return [ready.status, list.status];
};

describe('a rolling upgrade: the previous release beside the new one on one PostgreSQL', { skip: usingPostgres ? false : 'needs PostgreSQL (NDS_TEST_DB=postgres)' }, () => {
  let tmp: string;
  let oldRoot: string;
  let databaseUrl: string;
  let dbName: string;
  let old: Awaited<ReturnType<typeof startOld>> | undefined;
  let current: RunningServer | undefined;
  let oldEnv: Record<string, string>;
  const admin = () => new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });

  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'nds-upgrade-'));
    oldRoot = path.join(tmp, 'previous');
    await git('worktree', 'add', '--detach', oldRoot, await previousRelease());
    await symlink(path.resolve('node_modules'), path.join(oldRoot, 'node_modules'));
    dbName = `nds_upgrade_${randomBytes(4).toString('hex')}`;
    const c = admin();
    await c.connect();
    await c.query(`create database ${dbName}`);
    await c.end();
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
    oldEnv = { PORT: String(await freePort()), DATA_DIR: path.join(tmp, 'old-data'), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', IN_PROCESS_WORKER: 'false' };
  });
  after(async () => {
    if (old && old.child.exitCode === null) old.child.kill('SIGTERM');
    await old?.exited;
    await current?.close();
    await git('worktree', 'remove', '--force', oldRoot).catch(() => {});
    await rm(tmp, { recursive: true, force: true });
    const c = admin();
    await c.connect();
    await c.query(`drop database if exists ${dbName} with (force)`).catch(() => {});
    await c.end();
  });

  it('keeps the previous release answering while the new one migrates, and lets it restart on the newer schema', async () => {
    assert.ok(existsSync(path.join(oldRoot, 'bin/nds.js')));
    old = await startOld(oldRoot, oldEnv);
    const oldBase = `http://127.0.0.1:${oldEnv.PORT}`;
    assert.deepEqual(await answers(oldBase), [200, 200]);

    // The new release starts on the same database and migrates what the previous one lacks, while the old one serves.
    const config = loadConfig({ PORT: String(await freePort()), DATA_DIR: path.join(tmp, 'new-data'), DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', IN_PROCESS_WORKER: 'false' });
    const starting = startServer({ config, log: createLogger('silent'), hostname: '127.0.0.1' });
    const during = await answers(oldBase);
    current = await starting;
    assert.deepEqual(during, [200, 200]);
    assert.deepEqual(await answers(current.url.replace('localhost', '127.0.0.1')), [200, 200]);

    // An even newer release's expand migration: neither running process knows it.
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query(`alter table datasets add column upgrade_test_field text`);
    await c.query(`insert into kysely_migration (name, timestamp) values ('2099-01-01-0000-upgrade-test-expand', now())`);
    await c.end();
    assert.deepEqual(await answers(oldBase), [200, 200]);

    // The previous release restarts (a rolling deploy restarts processes in turn) and serves again.
    old.child.kill('SIGTERM');
    assert.equal(await old.exited, 0);
    old = await startOld(oldRoot, oldEnv);
    assert.deepEqual(await answers(oldBase), [200, 200]);
  });
  it("converts with the previous release's worker on the newer schema, alone and beside the new release's worker", async () => {
    assert.ok(current, 'the first test started the new release');
    const secret = 'rolling-upgrade-signing-secret';
    const gitDir = path.join(tmp, 'git');
    const node: RepositoryNode = await startRepositoryNode(gitDir, { dataDir: path.join(tmp, 'node-data'), objectSigningSecret: secret });
    const objectStoreUrl = `file:${path.join(tmp, 'objects')}`;
    const workerEnv = (name: string) => ({ DATA_DIR: path.join(tmp, name), DATABASE_URL: databaseUrl, OBJECT_STORE_URL: objectStoreUrl, NODE_URL: node.url, OBJECT_SIGNING_SECRET: secret, LOG_LEVEL: 'info' });
    const database = await connectDatabase(databaseUrl);
    const objects = await openObjectStore(objectStoreUrl, loadConfig(workerEnv('check')));
    const workers: CliRun[] = [];
    const jobState = async (id: string) => (await database.db.selectFrom('conversion_jobs').select('state').where('dataset_id', '=', id).orderBy('id', 'desc').executeTakeFirst())?.state;
    const converted = async (id: string, by: CliRun[]) => {
      const deadline = Date.now() + 120_000;
      while ((await jobState(id)) !== 'done') {
        for (const w of by) assert.equal(w.child.exitCode, null, `a worker ended: ${w.output().stderr.slice(-2000)}`);
        assert.ok(Date.now() < deadline, `${id} converted in time (state ${await jobState(id)})`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      const owner = await createUser(database.db, { username: 'upgrade-owner', email: 'upgrade@example.org', status: 'approved', kind: 'person' }, new Date());
      const [alone, together] = ['nd000731', 'nd000732'];
      for (const id of [alone, together]) {
        hostRepository(gitDir, id, makeEdfRepo(tmp, id, { subjects: 3, seconds: 10, channels: 8, rate: 250 }));
        await insertDatasetRows(database.db, { id, name: id, owner_id: owner.id, visibility: 'public', source_repo: hostedSource });
      }

      // The previous release's worker alone, on the schema two releases ahead of it.
      const old = startNds(['worker'], workerEnv('old-worker'), undefined, oldRoot);
      workers.push(old);
      await enqueueConversion(database.db, { datasetId: alone, ref: 'main', full: false, reason: 'test' });
      await converted(alone, [old]);

      // Both releases' workers at once on one job.
      const next = startNds(['worker'], workerEnv('new-worker'));
      workers.push(next);
      await enqueueConversion(database.db, { datasetId: together, ref: 'main', full: false, reason: 'test' });
      await converted(together, [old, next]);

      for (const id of [alone, together]) {
        const index = await readStoreIndex(objects, id);
        assert.deepEqual(index?.stores.map((s) => s.path).sort(), [1, 2, 3].map((n) => `sub-0${n}/eeg/sub-0${n}_task-rest_eeg.edf`), `${id}'s index lists its recordings`);
        assert.deepEqual(index?.failures, []);
      }
      // The old server reads what the workers published.
      assert.deepEqual(await answers(`http://127.0.0.1:${oldEnv.PORT}`), [200, 200]);
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGTERM');
      await Promise.all(workers.map((w) => w.done));
      await objects.close();
      await database.close();
      await node.close();
    }
  });
});
