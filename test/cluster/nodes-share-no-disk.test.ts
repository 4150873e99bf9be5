/**
 * Nodes that share no disk (issue 23, decision 0026), on one machine: two `nds serve` (API only,
 * IN_PROCESS_WORKER=false) and two `nds worker`, each with its own DATA_DIR, on one PostgreSQL database and one
 * object store (radosgw S3 when it answers at TEST_S3_URL's endpoint; otherwise a folder, said in the test's
 * output). A push through one node, a clone through the other, a conversion by a worker that holds no copy of
 * the repository; then the repository's node is stopped: its datasets' git routes answer 503 with the reason
 * through the other node, which keeps serving everything else, and a stranger still learns nothing.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mintApiKey } from '../../src/accounts/api-keys.js';
import { createUser } from '../../src/accounts/users.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { signGitFetchCredential } from '../../src/datasets/git-fetch-credential.js';
import { createPostgresTestDatabase, freePort, usingPostgres, type PostgresTestDatabase } from '../support/test-server.js';
import { gitIn, makeBidsRepo } from '../conversion/support.js';

interface Node {
  name: string;
  url: string;
  dataDir: string;
  child: ChildProcess;
  stderr(): string;
  exited: Promise<number | null>;
}

const SECRET = `cluster-${randomBytes(12).toString('hex')}`;

/** The S3 store of the test environment when its endpoint answers; undefined when it is not running. */
async function reachableS3(): Promise<string | undefined> {
  const url = process.env.TEST_S3_URL;
  if (!url) return undefined;
  const endpoint = new URL(url).searchParams.get('endpoint');
  if (!endpoint) return undefined;
  try {
    await fetch(endpoint, { signal: AbortSignal.timeout(2000) });
    return url;
  } catch {
    return undefined;
  }
}

function git(cwd: string, ...args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stderr }));
  });
}

describe('nodes that share no disk', { skip: usingPostgres ? false : 'a cluster needs a PostgreSQL server (NDS_TEST_DB=postgres, TEST_DATABASE_URL)' }, () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-cluster-'));
  const nodes: Node[] = [];
  let database: PostgresTestDatabase;
  let db: DatabaseHandle;
  let api1: Node;
  let api2: Node;
  let owner: string;
  let stranger: string;
  let id: string;
  let repo: string;
  const remote = (node: Node, key?: string) => {
    const u = new URL(`${node.url}/git/${id}.git`);
    if (key) [u.username, u.password] = ['nds', key];
    return u.toString();
  };

  function start(name: string, command: 'serve' | 'worker', env: Record<string, string>, ready: RegExp): Promise<Node> {
    const dataDir = path.join(tmp, name);
    const child = spawn(process.execPath, [path.resolve('bin/nds.js'), command], {
      env: { ...process.env, NDS_SERVE_LAUNCHER: 'off', LOG_LEVEL: 'warn', DATA_DIR: dataDir, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let text = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const node: Node = { name, url: env.NODE_URL ?? '', dataDir, child, stderr: () => text, exited };
    nodes.push(node);
    return new Promise((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        text += d.toString();
        if (ready.test(text)) resolve(node);
      });
      void exited.then((code) => reject(new Error(`${name} exited (${code}): ${text}`)));
    });
  }

  before(async () => {
    // One run builds the CLI's bundle of these sources (bin/nds.js), so the four processes below do not all build it.
    await new Promise((resolve) => spawn(process.execPath, [path.resolve('bin/nds.js'), '--version'], { stdio: 'ignore' }).once('close', resolve));
    database = await createPostgresTestDatabase();
    const s3 = await reachableS3();
    // Without radosgw the object store is a folder of this machine; the repositories and DATA_DIRs stay apart.
    if (!s3) console.log('# the object store is a folder: no S3 server answers at TEST_S3_URL');
    const objects = s3 ?? `file:${path.join(tmp, 'objects')}`;
    const [p1, p2] = [await freePort(), await freePort()];
    const shared = { DATABASE_URL: database.url, OBJECT_STORE_URL: objects, OBJECT_SIGNING_SECRET: SECRET, SERVICE_WEBHOOK_TOKEN: SECRET, PUBLIC_URL: `http://127.0.0.1:${p1}`, IN_PROCESS_WORKER: 'false' };
    [api1, api2] = await Promise.all([
      start('api1', 'serve', { ...shared, PORT: String(p1), NODE_URL: `http://127.0.0.1:${p1}` }, /nds is listening/),
      start('api2', 'serve', { ...shared, PORT: String(p2), NODE_URL: `http://127.0.0.1:${p2}` }, /nds is listening/),
      start('worker1', 'worker', shared, /taking conversion jobs/),
      start('worker2', 'worker', shared, /taking conversion jobs/),
    ]);
    db = await connectDatabase(database.url);
    const account = async (name: string) => {
      const user = await createUser(db.db, { username: `${name}-${process.pid}`, email: `${name}-${process.pid}@example.org`, status: 'approved', role: 'member', kind: 'person' }, new Date());
      return (await mintApiKey(db.db, user.id, 'test', 'admin')).apiKey;
    };
    owner = await account('owner');
    stranger = await account('stranger');
    const created = await fetch(`${api2.url}/datasets`, { method: 'POST', headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Across nodes', visibility: 'private' }) });
    assert.equal(created.status, 201, await created.clone().text());
    id = ((await created.json()) as { id: string }).id;
    repo = makeBidsRepo();
  });

  after(async () => {
    for (const node of nodes) if (node.child.exitCode === null) node.child.kill('SIGKILL');
    await Promise.all(nodes.map((n) => n.exited));
    await db?.close();
    await database?.drop();
    rmSync(tmp, { recursive: true, force: true });
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('a push through one node, a clone through the other, a conversion by a worker with neither disk', async () => {
    const pushed = await git(repo, 'push', '-q', remote(api1, owner), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    // The repository is on the disk of the node that took the push, and on no other.
    assert.ok(existsSync(path.join(api1.dataDir, 'git', `${id}.git`)));
    assert.equal(existsSync(path.join(api2.dataDir, 'git', `${id}.git`)), false);

    const clone = path.join(tmp, 'clone');
    const cloned = await git(tmp, 'clone', '-q', remote(api2, owner), clone);
    assert.equal(cloned.status, 0, cloned.stderr);
    assert.equal(gitIn(clone, 'rev-parse', 'HEAD'), gitIn(repo, 'rev-parse', 'HEAD'));

    // The push queued a conversion; a worker process (not an API node) fetches the source over HTTP and converts it.
    let dataset: { zarr_status: string | null } = { zarr_status: null };
    for (const started = Date.now(); dataset.zarr_status !== 'ready'; await new Promise((r) => setTimeout(r, 250))) {
      assert.ok(Date.now() - started < 45_000, `no conversion: ${JSON.stringify(dataset)}`);
      dataset = (await (await fetch(`${api2.url}/datasets/${id}`, { headers: { authorization: `Bearer ${owner}` } })).json()) as typeof dataset;
      assert.notEqual(dataset.zarr_status, 'failed', JSON.stringify(dataset));
    }
    // The job is marked done just after the dataset is.
    const doneJob = () => db.db.selectFrom('conversion_jobs').select(['worker_id', 'state']).where('dataset_id', '=', id).where('state', '=', 'done').executeTakeFirst();
    let job = await doneJob();
    for (const started = Date.now(); !job; job = await doneJob()) {
      assert.ok(Date.now() - started < 10_000, 'the job was not marked done');
      await new Promise((r) => setTimeout(r, 100));
    }
    const workerPids = nodes.filter((n) => n.name.startsWith('worker')).map((n) => n.child.pid);
    assert.ok(workerPids.some((pid) => job.worker_id?.includes(`:${pid}:`)), `converted by ${job.worker_id}, not by a worker process`);
    // The worker kept a mirror in its own DATA_DIR, and no repository folder of its own.
    const worker = nodes.find((n) => job.worker_id?.includes(`:${n.child.pid}:`))!;
    assert.ok(existsSync(path.join(worker.dataDir, 'sources', `${id}.git`)));
    assert.equal(existsSync(path.join(worker.dataDir, 'git')), false);

    // A version from a commit, asked of the node without the repository, is made by the one that holds it.
    const version = await fetch(`${api2.url}/datasets/${id}/versions`, { method: 'POST', headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ version: '1.0.0', commit: 'main' }) });
    assert.equal(version.status, 201, await version.clone().text());
    assert.equal(((await version.json()) as { source_commit: string }).source_commit, gitIn(repo, 'rev-parse', 'HEAD'));
    assert.equal(gitIn(api1.dataDir, '--git-dir', path.join(api1.dataDir, 'git', `${id}.git`), 'rev-parse', 'v1.0.0^{commit}'), gitIn(repo, 'rev-parse', 'HEAD'));
  });

  it("forwarding goes around no rule: a stranger gets the unknown id's answer through either node, a fetch credential cannot push", async () => {
    const asked = async (node: Node, dataset: string, key: string) => {
      const r = await fetch(`${node.url}/git/${dataset}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Basic ${Buffer.from(`nds:${key}`).toString('base64')}` } });
      return { status: r.status, body: await r.text() };
    };
    const unknown = await asked(api2, 'nd999999', stranger);
    assert.equal(unknown.status, 404);
    for (const node of [api1, api2]) assert.deepEqual(await asked(node, id, stranger), unknown, node.name);
    // The workers' credential reads; it never pushes, through the holder or through the other node.
    const credential = signGitFetchCredential({ dataDir: tmp, objectSigningSecret: SECRET }, id, new Date());
    assert.equal((await asked(api2, id, credential)).status, 200);
    for (const node of [api1, api2]) {
      const push = await fetch(`${node.url}/git/${id}.git/info/refs?service=git-receive-pack`, { headers: { authorization: `Bearer ${credential}` } });
      assert.equal(push.status, 401, node.name);
    }
    // Nor does it read anything of the API.
    assert.equal((await fetch(`${api2.url}/datasets/${id}`, { headers: { authorization: `Bearer ${credential}` } })).status, 401);
  });

  it("the repository's node stopped: its git routes answer 503 with the reason through the other node, the rest keeps serving", async () => {
    api1.child.kill('SIGKILL');
    await api1.exited;
    const refs = await fetch(`${api2.url}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${owner}` } });
    assert.equal(refs.status, 503);
    assert.match(((await refs.json()) as { message: string }).message, /node that holds this dataset's git repository is not answering/);
    assert.ok(refs.headers.get('retry-after'));
    const cloned = await git(tmp, 'clone', '-q', remote(api2, owner), path.join(tmp, 'clone-2'));
    assert.notEqual(cloned.status, 0);
    assert.match(cloned.stderr, /503/);
    // A stranger still gets the unknown id's answer, not a 503 that would tell the dataset exists.
    const strange = await fetch(`${api2.url}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${stranger}` } });
    assert.equal(strange.status, 404);
    // Everything else of the dataset is still served by the other node.
    const page = await fetch(`${api2.url}/datasets/${id}`, { headers: { authorization: `Bearer ${owner}` } });
    assert.equal(page.status, 200);
    assert.equal(((await page.json()) as { id: string }).id, id);
    const recordings = await fetch(`${api2.url}/datasets/${id}/recordings`, { headers: { authorization: `Bearer ${owner}` } });
    assert.equal(recordings.status, 200, await recordings.clone().text());
  });
});
