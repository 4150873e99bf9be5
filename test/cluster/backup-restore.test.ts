/**
 * Backup and restore as `docs/deploy.md` ("Backup and restore") tells it, on PostgreSQL: the database with
 * `pg_dump`, the object store (a folder here; `aws s3 sync` for S3), the hosted git repositories of the node
 * that holds them, and the secrets. Restored into a fresh install (a new database, a new DATA_DIR, another
 * address), the service reads the dataset, the same signal window and the repository back.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { createPostgresTestDatabase, startTestServer, usingPostgres, type PostgresTestDatabase, type TestServer } from '../support/test-server.js';
import { gitIn, makeBidsRepo } from '../conversion/support.js';

const run = promisify(execFile);
const SECRETS = { OBJECT_SIGNING_SECRET: 'backup-test-signing-secret', SERVICE_WEBHOOK_TOKEN: 'backup-test-webhook-token' };

function git(cwd: string, ...args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stderr }));
  });
}

describe('backup and restore into a fresh install', { skip: usingPostgres ? false : 'pg_dump and pg_restore need a PostgreSQL server (NDS_TEST_DB=postgres, TEST_DATABASE_URL)' }, () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-backup-'));
  const backup = path.join(tmp, 'backup');
  let original: TestServer;
  let restored: TestServer | undefined;
  let fresh: PostgresTestDatabase;
  let owner: TestAccount;
  let repo: string;
  const id = 'nd000501';
  const remote = (server: TestServer) => {
    const u = new URL(`${server.url}/git/${id}.git`);
    [u.username, u.password] = ['nds', owner.key];
    return u.toString();
  };
  const window = (server: TestServer, recording: string) =>
    fetch(`${server.url}/datasets/${id}/signal?path=${encodeURIComponent(recording)}&start_sample=0&n_samples=64&format=json`, { headers: { authorization: `Bearer ${owner.key}` } });

  before(async () => {
    original = await startTestServer({ env: SECRETS });
    owner = await createAccount(original);
    await insertDatasetRows(original.deps.db, { id, name: 'Backed up', owner_id: owner.user.id, visibility: 'private' });
    repo = makeBidsRepo();
    const pushed = await git(repo, 'push', '-q', remote(original), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    for (let waited = 0; !(await original.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).executeTakeFirst()); waited += 50) {
      assert.ok(waited < 20_000, 'the push queued no conversion');
      await new Promise((r) => setTimeout(r, 50));
    }
    await original.worker!.idle();
    fresh = await createPostgresTestDatabase();
  });
  after(async () => {
    await restored?.close();
    await original?.close();
    await fresh?.drop();
    rmSync(tmp, { recursive: true, force: true });
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('reads the dataset, the same signal window and the repository back', async () => {
    const { recordings } = (await (await fetch(`${original.url}/datasets/${id}/recordings`, { headers: { authorization: `Bearer ${owner.key}` } })).json()) as { recordings: Array<{ path: string }> };
    assert.ok(recordings.length > 0);
    const before = await window(original, recordings[0]!.path);
    assert.equal(before.status, 200, await before.clone().text());
    const signal = await before.json();

    // The backup, as docs/deploy.md writes it: database, objects, repositories (secrets are the environment's).
    mkdirSync(backup);
    await run('pg_dump', ['--format=custom', `--file=${path.join(backup, 'nds.dump')}`, original.config.databaseUrl]);
    await run('tar', ['-C', original.config.objectStoreUrl.slice('file:'.length), '-cf', path.join(backup, 'objects.tar'), '.']);
    await run('tar', ['-C', original.config.gitDir, '-cf', path.join(backup, `git-${new URL(original.config.nodeUrl).port}.tar`), '.']);
    const oldNode = original.config.nodeUrl;
    await original.close();

    // The restore: an empty database, a new DATA_DIR, another address.
    const dataDir = path.join(tmp, 'restored');
    mkdirSync(path.join(dataDir, 'objects'), { recursive: true });
    mkdirSync(path.join(dataDir, 'git'), { recursive: true });
    const client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
    try {
      // createPostgresTestDatabase gives a migrated database; a fresh install's is empty: make it so.
      await client.query('drop schema public cascade; create schema public');
    } finally {
      await client.end();
    }
    await run('pg_restore', ['--no-owner', `--dbname=${fresh.url}`, path.join(backup, 'nds.dump')]);
    await run('tar', ['-C', path.join(dataDir, 'objects'), '-xf', path.join(backup, 'objects.tar')]);
    await run('tar', ['-C', path.join(dataDir, 'git'), '-xf', path.join(backup, `git-${new URL(oldNode).port}.tar`)]);
    restored = await startTestServer({ env: { ...SECRETS, DATABASE_URL: fresh.url, DATA_DIR: dataDir } });
    // The repositories now live at the new node's address (docs/deploy.md, "A node's address changes").
    await run('psql', [fresh.url, '-qAt', '-c', `update repository_holders set node_url = '${restored.config.nodeUrl}' where node_url = '${oldNode}'`]);

    const dataset = await (await fetch(`${restored.url}/datasets/${id}`, { headers: { authorization: `Bearer ${owner.key}` } })).json();
    assert.deepEqual([dataset.id, dataset.zarr_status, dataset.visibility], [id, 'ready', 'private']);
    const after = await window(restored, recordings[0]!.path);
    assert.equal(after.status, 200, await after.clone().text());
    assert.deepEqual(await after.json(), signal);
    const clone = path.join(tmp, 'clone');
    const cloned = await git(tmp, 'clone', '-q', remote(restored), clone);
    assert.equal(cloned.status, 0, cloned.stderr);
    assert.equal(gitIn(clone, 'rev-parse', 'HEAD'), gitIn(repo, 'rev-parse', 'HEAD'));
  });
});
