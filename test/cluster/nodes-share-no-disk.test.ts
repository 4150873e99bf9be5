/**
 * An nds cluster on one machine (issue 23, decision 0026), started once for this file: two `nds serve` (API
 * only, IN_PROCESS_WORKER=false), two `nds worker` and one `nds gateway` (two processes), each with its own
 * DATA_DIR (no folder shared), on one PostgreSQL database, one Redis (the gateways' shared cache) and one object
 * store (a fresh bucket at radosgw when TEST_S3_URL's endpoint answers; otherwise a folder, said in the test's
 * output), behind Debian's nginx (`/` round-robin over the API nodes, `/zarrproxy/` to the gateway), as
 * docs/deploy.md lays it out.
 *
 * Through it: the getting-started path (a terminal signed in, a dataset created, uploaded, converted by a
 * worker, published, its viewer data read through the gateway and its cache); a push through one node, a
 * clone through the other and a conversion by a worker that holds no copy of the repository; one request id
 * in the logs of the two nodes a git request crossed; every process's metrics; a worker killed with SIGKILL in
 * the middle of a recording, whose job the other worker finishes within the lease; then the repository's node
 * stopped: its datasets' git routes answer 503 with the reason through the other node, which keeps serving
 * everything else, and a stranger still learns nothing.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mintApiKey } from '../../src/accounts/api-keys.js';
import { bootstrapOwner } from '../../src/accounts/bootstrap-owner.js';
import { createUser } from '../../src/accounts/users.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { signGitFetchCredential } from '../../src/datasets/git-fetch-credential.js';
import { startNds } from '../support/cli.js';
import { buildCliOnce, freshS3Store, loggedBy, metricSum, scrapeMetrics, startNdsProcess, type NdsProcess } from '../support/cluster.js';
import { startNginx, stopChild } from '../support/nginx.js';
import { signInCodeFor, waitForMail } from '../support/outbox.js';
import { OwnRedis } from '../support/own-redis.js';
import { createPostgresTestDatabase, freePort, usingPostgres, type PostgresTestDatabase } from '../support/test-server.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { fixtures, gitIn, makeBidsRepo } from '../conversion/support.js';

const SECRET = `cluster-${randomBytes(12).toString('hex')}`;
const METRICS_TOKEN = `metrics-${randomBytes(16).toString('hex')}`;
/**
 * CONVERSION_LEASE_S of the cluster: a running job whose heartbeat (every third of it) is older is lost, and
 * another worker takes it back. Short here, so that the test waits it out in seconds (default 30).
 */
const LEASE_S = 8;
/**
 * A PID namespace of its own for the second worker, as another host (or a container) has: the workers then
 * cannot tell by pid whether the other lives, and a killed one's work comes back only when its lease ran out,
 * as across hosts. Root only; elsewhere both workers are one host to each other (said in the test's output).
 */
const OWN_PID_NAMESPACE = ['unshare', '--pid', '--fork', '--kill-child=SIGKILL'];
const canUnshare = spawnSync(OWN_PID_NAMESPACE[0]!, [...OWN_PID_NAMESPACE.slice(1), 'true']).status === 0;

function git(cwd: string, ...args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stderr }));
  });
}

/** An EDF of 32 channels, 120 s at 1000 Hz (about 7.7 MB): its conversion takes long enough to be cut. */
function largeRecording(): Uint8Array {
  const records = 120;
  const rate = 1000;
  const signals = Array.from({ length: 32 }, (_, c) => {
    const samples = new Int16Array(records * rate);
    let noise = c + 1;
    for (let i = 0; i < samples.length; i++) {
      noise = (noise * 1103515245 + 12345) & 0x7fffffff;
      samples[i] = Math.round(3000 * Math.sin((i * (c + 1)) / 50) + ((noise >> 8) % 2000) - 1000);
    }
    return { label: `EEG${c + 1}`, samplesPerRecord: rate, samples };
  });
  return writeEdf({ recordDuration: 1, records, signals });
}

async function until<T>(read: () => Promise<T | undefined>, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `${what} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('an nds cluster on one machine: two API nodes, two workers and a gateway behind nginx, sharing no disk', { timeout: 300_000, skip: usingPostgres ? false : 'a cluster needs a PostgreSQL server (NDS_TEST_DB=postgres, TEST_DATABASE_URL)' }, () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-cluster-'));
  let database: PostgresTestDatabase;
  let db: DatabaseHandle;
  let redis: OwnRedis | undefined;
  let s3Cleanup: (() => Promise<void>) | undefined;
  let nginx: ChildProcess | undefined;
  const processes: NdsProcess[] = [];
  let api1: NdsProcess;
  let api2: NdsProcess;
  let workers: NdsProcess[];
  let gateway: NdsProcess;
  /** The address of nginx: PUBLIC_URL, where users, the CLI and browsers go. */
  let publicUrl: string;
  let owner: string;
  let stranger: string;
  let id: string;
  let repo: string;
  /** The dataset of the getting-started path (published). */
  let published: string;
  const remote = (base: string, key?: string) => {
    const u = new URL(`${base}/git/${id}.git`);
    if (key) [u.username, u.password] = ['nds', key];
    return u.toString();
  };
  const basic = (key: string) => `Basic ${Buffer.from(`nds:${key}`).toString('base64')}`;
  const hostOf = (proc: NdsProcess) => new URL(proc.url).host;
  /** Whether the worker id of a job or task (`host:pid:start:worker`) names this worker process. */
  const ranBy = (workerId: string | null, worker: NdsProcess) => workerId?.includes(`:${worker.pid()}:`) === true;
  /** The dataset's conversion job once it is marked done, which is just after the dataset is ready (what `--wait` watches). */
  const doneJobOf = (datasetId: string) =>
    until(() => db.db.selectFrom('conversion_jobs').select(['worker_id']).where('dataset_id', '=', datasetId).where('state', '=', 'done').executeTakeFirst(), 'the job marked done', 10_000);
  /** What the API nodes logged of git requests and of trouble, for a failure's message. */
  const gitLog = () =>
    [api1, api2].map((p) => `${p.name}: ${p.logs.filter((e) => (e.level as number) >= 40 || String(e.route ?? '').startsWith('/git')).slice(-12).map((e) => JSON.stringify(e)).join('\n')}`).join('\n');
  /** A chunk of the published copy, read through the gateway (cached there for a day). */
  let viewerChunk: string;

  before(async () => {
    await buildCliOnce();
    database = await createPostgresTestDatabase();
    const ports: number[] = [];
    while (ports.length < 5) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    const [p1, p2, gatewayPort, nginxPort, redisPort] = ports as [number, number, number, number, number];
    publicUrl = `http://127.0.0.1:${nginxPort}`;
    mkdirSync(path.join(tmp, 'redis'));
    redis = new OwnRedis(redisPort, path.join(tmp, 'redis'));
    const s3 = await freshS3Store();
    s3Cleanup = s3?.cleanup;
    // Without radosgw the object store is a folder of this machine; the repositories and DATA_DIRs stay apart.
    if (!s3) console.log('# the object store is a folder: no S3 server answers at TEST_S3_URL');
    const objects = s3?.url ?? `file:${path.join(tmp, 'objects')}`;
    await redis.start();
    const shared = {
      DATABASE_URL: database.url,
      OBJECT_STORE_URL: objects,
      CACHE_REDIS_URL: redis.url,
      OBJECT_SIGNING_SECRET: SECRET,
      SERVICE_WEBHOOK_TOKEN: SECRET,
      METRICS_TOKEN,
      PUBLIC_URL: publicUrl,
      TRUSTED_PROXIES: '127.0.0.1/32',
      IN_PROCESS_WORKER: 'false',
      CONVERSION_LEASE_S: String(LEASE_S),
      LOG_LEVEL: 'info',
    };
    const start = (name: string, command: 'serve' | 'worker' | 'gateway', env: Record<string, string>, under?: string[]) => startNdsProcess({ name, command, dataDir: path.join(tmp, name), env: { ...shared, ...env }, under });
    if (!canUnshare) console.log("# unshare --pid is not permitted here: the workers share a PID namespace, and a killed one's job comes back by its pid, not by the lease");
    const started = [
      start('api1', 'serve', { PORT: String(p1), NODE_URL: `http://127.0.0.1:${p1}` }),
      start('api2', 'serve', { PORT: String(p2), NODE_URL: `http://127.0.0.1:${p2}` }),
      start('worker1', 'worker', { METRICS_PORT: '0' }),
      start('worker2', 'worker', { METRICS_PORT: '0' }, canUnshare ? OWN_PID_NAMESPACE : undefined),
      start('gateway', 'gateway', { PORT: String(gatewayPort), GATEWAY_WORKERS: '2' }),
    ];
    processes.push(...started);
    await Promise.all(started.map((p) => p.ready));
    [api1, api2] = started as [NdsProcess, NdsProcess];
    workers = started.slice(2, 4);
    gateway = started[4]!;
    nginx = await startNginx(path.join(tmp, 'nginx'), nginxPort, [p1, p2], { '/zarrproxy/': [gatewayPort] });

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
    await stopChild(nginx, 'SIGQUIT');
    // The gateway's primary stops its worker processes on SIGTERM; the others have nothing to finish.
    if (gateway) await stopChild(gateway.child, 'SIGTERM');
    for (const proc of processes) if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    await Promise.all(processes.map((p) => p.exited));
    await redis?.kill().catch(() => {});
    await db?.close();
    await database?.drop();
    rmSync(tmp, { recursive: true, force: true });
    if (repo) rmSync(repo, { recursive: true, force: true });
    // Last: an S3 server gone meanwhile fails only this.
    await s3Cleanup?.();
  });

  it('the getting-started path through nginx: a terminal signed in, a dataset created, uploaded, converted by a worker, published, its viewer data read through the gateway', async () => {
    // The owner, as `nds admin bootstrap` makes it (docs/getting-started.md, step 2).
    const email = `ada-${process.pid}@example.org`;
    await bootstrapOwner(db.db, { username: `ada-${process.pid}`, email }, new Date());
    const cli = { NDS_API_URL: publicUrl, XDG_CONFIG_HOME: path.join(tmp, 'config'), NDS_UPLOAD_HASH_CACHE: 'off' };
    const nds = async (...args: string[]) => {
      const run = await startNds(args, cli).done;
      assert.equal(run.code, 0, `nds ${args.join(' ')} failed:\n${run.stderr}`);
      return run;
    };

    // `nds auth login`, approved in the browser: each request goes to whichever node nginx picks.
    const login = startNds(['auth', 'login'], cli);
    const [, userCode] = await login.stderrMatch(/Your code: (\S+)/, 60_000);
    const headers = { 'content-type': 'application/json', origin: publicUrl };
    const asked = await fetch(`${publicUrl}/auth/code/request`, { method: 'POST', headers, body: JSON.stringify({ email }) });
    assert.equal(asked.status, 200, await asked.text());
    const [outbox] = await waitForMail([api1.dataDir, api2.dataDir], email);
    const verified = await fetch(`${publicUrl}/auth/code/verify`, { method: 'POST', headers, body: JSON.stringify({ email, code: await signInCodeFor(outbox!, email) }) });
    assert.equal(verified.status, 200, await verified.text());
    const cookie = verified.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const approved = await fetch(`${publicUrl}/auth/device/confirm`, { method: 'POST', headers: { ...headers, cookie }, body: JSON.stringify({ code: userCode }) });
    assert.equal(approved.status, 200, await approved.text());
    assert.equal((await login.done).code, 0, login.output().stderr);

    published = (await nds('datasets', 'create', 'Resting EEG pilot', '--description', 'Eyes-open and eyes-closed rest', '--license', 'CC0-1.0', '--author', 'Ada Lovelace')).stdout.trim();
    assert.match(published, /^nd\d{6}$/);
    const study = path.join(tmp, 'my-study');
    cpSync(path.join(fixtures, 'bids/emg_CustomBipolar'), study, { recursive: true });
    const uploaded = await nds('datasets', 'upload', published, study, '--wait');
    assert.match(uploaded.stdout, /^converted {2}sub-01\/emg\/sub-01_task-holdWeight_emg\.edf: 1 group, 1 channel, 1\.0 s$/m);
    // Converted by a worker process, not by an API node.
    const job = await doneJobOf(published);
    assert.ok(workers.some((w) => ranBy(job.worker_id, w)), `converted by ${job.worker_id}`);

    const requested = await nds('datasets', 'publish', 'request', published);
    const request = /^request (\d+) for/m.exec(requested.stdout)?.[1];
    assert.ok(request, requested.stdout);
    assert.match((await nds('admin', 'publish', 'approve', request)).stdout, /approved/);

    // The dataset's page, from an API node, points its viewer at the gateway, through nginx.
    const zarrBase = `${publicUrl}/zarrproxy/${published}/zarr`;
    const page = await fetch(`${publicUrl}/datasets/${published}`, { headers: { accept: 'text/html' } });
    assert.equal(page.status, 200);
    const viewer = /<script type="application\/json" id="nds-viewer-config">([\s\S]*?)<\/script>/.exec(await page.text());
    assert.ok(viewer, 'the page has the viewer');
    assert.equal((JSON.parse(viewer[1]!) as { zarrBase: string }).zarrBase, zarrBase);
    // What the viewer reads there: the index, a store's metadata, a chunk (with the page's Origin).
    const read = (key: string) => fetch(`${zarrBase}/${key}`, { headers: { origin: publicUrl } });
    const index = await read('index.json');
    assert.equal(index.status, 200, await index.clone().text());
    assert.equal(index.headers.get('x-upstream'), hostOf(gateway), 'served by nds gateway');
    assert.equal(index.headers.get('access-control-allow-origin'), publicUrl);
    const store = ((await index.json()) as { stores: Array<{ zarr: string }> }).stores[0]!.zarr;
    const root = await read(`${store}/zarr.json`);
    assert.equal(root.status, 200);
    const group = ((await root.json()) as { attributes: { channel_groups: Array<{ name: string }> } }).attributes.channel_groups[0]!.name;
    const chunk = `${store}/${group}/0/c/0/0`;
    viewerChunk = chunk;
    const first = await read(chunk);
    assert.equal(first.status, 200);
    const bytes = Buffer.from(await first.arrayBuffer());
    assert.ok(bytes.length > 0);
    const again = await read(chunk);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('x-cache'), 'HIT');
    assert.deepEqual(Buffer.from(await again.arrayBuffer()), bytes);
    // The gateway's processes share their cache through Redis.
    assert.ok((await redis!.with((r) => r.keys('nds:gw:o:*'))).length > 0, 'the gateway cached in Redis');
  });

  it('a push through one node, a clone through the other, a conversion by a worker with neither disk', async () => {
    const pushed = await git(repo, 'push', '-q', remote(api1.url, owner), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    // The repository is on the disk of the node that took the push, and on no other.
    assert.ok(existsSync(path.join(api1.dataDir, 'git', `${id}.git`)));
    assert.equal(existsSync(path.join(api2.dataDir, 'git', `${id}.git`)), false);

    const clone = path.join(tmp, 'clone');
    const cloned = await git(tmp, 'clone', '-q', remote(api2.url, owner), clone);
    assert.equal(cloned.status, 0, cloned.stderr);
    assert.equal(gitIn(clone, 'rev-parse', 'HEAD'), gitIn(repo, 'rev-parse', 'HEAD'));

    // The push queued a conversion; a worker process (not an API node) fetches the source over HTTP and converts it.
    let dataset: { zarr_status: string | null } = { zarr_status: null };
    for (const started = Date.now(); dataset.zarr_status !== 'ready'; await new Promise((r) => setTimeout(r, 250))) {
      assert.ok(Date.now() - started < 45_000, `no conversion: ${JSON.stringify(dataset)}`);
      dataset = (await (await fetch(`${api2.url}/datasets/${id}`, { headers: { authorization: `Bearer ${owner}` } })).json()) as typeof dataset;
      assert.notEqual(dataset.zarr_status, 'failed', JSON.stringify(dataset));
    }
    const job = await doneJobOf(id);
    const worker = workers.find((w) => ranBy(job.worker_id, w));
    assert.ok(worker, `converted by ${job.worker_id}, not by a worker process`);
    // The worker kept a mirror in its own DATA_DIR, and no repository folder of its own.
    assert.ok(existsSync(path.join(worker.dataDir, 'sources', `${id}.git`)));
    assert.equal(existsSync(path.join(worker.dataDir, 'git')), false);

    // A version from a commit, asked of the node without the repository, is made by the one that holds it.
    const version = await fetch(`${api2.url}/datasets/${id}/versions`, { method: 'POST', headers: { authorization: `Bearer ${owner}`, 'content-type': 'application/json' }, body: JSON.stringify({ version: '1.0.0', commit: 'main' }) });
    assert.equal(version.status, 201, await version.clone().text());
    assert.equal(((await version.json()) as { source_commit: string }).source_commit, gitIn(repo, 'rev-parse', 'HEAD'));
    assert.equal(gitIn(api1.dataDir, '--git-dir', path.join(api1.dataDir, 'git', `${id}.git`), 'rev-parse', 'v1.0.0^{commit}'), gitIn(repo, 'rev-parse', 'HEAD'));
  });

  it("forwarding goes around no rule: a stranger gets the unknown id's answer through either node, a fetch credential cannot push", async () => {
    const asked = async (node: NdsProcess, dataset: string, key: string) => {
      const r = await fetch(`${node.url}/git/${dataset}.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic(key) } });
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

  it('one request id through nginx and across nodes: a git request taken by the node without the repository is in the logs of both', async () => {
    /** Asks for the refs through nginx until the node without the repository (api2) took a request; returns its id. */
    const throughTheOtherNode = async (sentId: () => string | undefined) => {
      for (let i = 0; i < 6; i++) {
        const sent = sentId();
        const res = await fetch(`${publicUrl}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic(owner), ...(sent ? { 'x-request-id': sent } : {}) } });
        await res.arrayBuffer();
        assert.equal(res.status, 200);
        const answered = res.headers.get('x-request-id');
        assert.ok(answered);
        if (sent) assert.equal(answered, sent);
        if (res.headers.get('x-upstream') === hostOf(api2)) return answered;
      }
      assert.fail('nginx sent no request to api2');
    };
    const accessLine = (proc: NdsProcess, requestId: string) => loggedBy(proc, (e) => e.msg === 'request' && e.requestId === requestId, `access line of ${requestId}`, 10_000);

    // An id the client sends is adopted by the node nginx picked, and goes with the request to the holder.
    const sent = await throughTheOtherNode(() => `cluster-${randomBytes(8).toString('hex')}`);
    const [atEntry, atHolder] = await Promise.all([accessLine(api2, sent), accessLine(api1, sent)]);
    assert.deepEqual([atEntry.status, atHolder.status], [200, 200]);
    assert.deepEqual([atEntry.pid, atHolder.pid], [api2.child.pid, api1.child.pid]);
    assert.equal(atHolder.route, atEntry.route);

    // Without one, the id the first node gives is the one the holder logs and the client is answered.
    const given = await throughTheOtherNode(() => undefined);
    await Promise.all([accessLine(api2, given), accessLine(api1, given)]);
  });

  it('metrics from every process: requests counted, the queue depth, the gateway cache hits, the conversions of each worker', async () => {
    const all = [api1, api2, ...workers, gateway];
    const first = await Promise.all(all.map((p) => scrapeMetrics(p.url, METRICS_TOKEN)));
    // One request of each process's own kind: the API read of a dataset, a worker's probe, a chunk through nginx.
    for (const node of [api1, api2]) assert.equal((await fetch(`${node.url}/datasets/${published}`, { headers: { accept: 'application/json' } })).status, 200);
    for (const worker of workers) assert.equal((await fetch(`${worker.url}/healthz`)).status, 200);
    const chunk = await fetch(`${publicUrl}/zarrproxy/${published}/zarr/${viewerChunk}`);
    assert.equal(chunk.headers.get('x-cache'), 'HIT');
    await chunk.arrayBuffer();
    const afterwards = await Promise.all(all.map((p) => scrapeMetrics(p.url, METRICS_TOKEN)));
    const [api1Before, api2Before, w1Before, w2Before, gatewayBefore] = first as [string, string, string, string, string];
    const [api1After, api2After, w1After, w2After, gatewayAfter] = afterwards as [string, string, string, string, string];
    const requests = (text: string, labels: Record<string, string>) => metricSum(text, 'nds_http_request_duration_seconds_count', labels) ?? 0;

    for (const [name, was, is] of [['api1', api1Before, api1After], ['api2', api2Before, api2After]] as const) {
      const read = { method: 'GET', route: '/datasets/:id', status: '200' };
      assert.ok(requests(is, read) > requests(was, read), `${name}: GET /datasets/:id counted`);
      assert.notEqual(metricSum(is, 'nds_conversion_queue_depth'), undefined, `${name}: queue depth`);
      assert.notEqual(metricSum(is, 'nds_conversion_queue_oldest_age_seconds'), undefined, `${name}: oldest queued job's age`);
      assert.notEqual(metricSum(is, 'nds_db_pool_connections_in_use'), undefined, `${name}: database pool`);
    }
    for (const [name, was, is] of [['worker1', w1Before, w1After], ['worker2', w2Before, w2After]] as const) {
      const probe = { method: 'GET', route: '/healthz', status: '200' };
      assert.ok(requests(is, probe) > requests(was, probe), `${name}: its probe counted`);
      assert.notEqual(metricSum(is, 'nds_conversion_queue_depth'), undefined, `${name}: queue depth`);
      assert.ok((metricSum(is, 'process_resident_memory_bytes') ?? 0) > 0, `${name}: process metrics`);
    }
    // The two conversions so far (the upload's, the push's) were counted by the workers that ran them.
    const done = (text: string) => metricSum(text, 'nds_conversion_job_duration_seconds_count', { outcome: 'done' }) ?? 0;
    assert.ok(done(w1After) + done(w2After) >= 2, `conversions done: ${done(w1After)} + ${done(w2After)}`);
    assert.ok((metricSum(w1After, 'nds_conversion_recording_duration_seconds_count', { outcome: 'converted' }) ?? 0) + (metricSum(w2After, 'nds_conversion_recording_duration_seconds_count', { outcome: 'converted' }) ?? 0) >= 3);
    // The gateway's figures are the sum over its two processes: the hits of the path above and this one.
    const hits = (text: string) => metricSum(text, 'nds_gateway_answers_total', { cache: 'HIT' }) ?? 0;
    assert.ok(hits(gatewayAfter) > hits(gatewayBefore), `gateway hits ${hits(gatewayBefore)} → ${hits(gatewayAfter)}`);
    assert.ok((metricSum(gatewayAfter, 'nds_gateway_answers_total', { cache: 'MISS' }) ?? 0) >= 1);
    assert.ok((metricSum(gatewayAfter, 'nds_gateway_sent_bytes_total', { cache: 'HIT' }) ?? 0) > 0);
    // The public, through nginx, reads none of it.
    assert.equal((await fetch(`${publicUrl}/metrics`)).status, 403);
  });

  it(`kill -9 of a worker in the middle of a recording: the other takes it back once the lease (${LEASE_S} s) ran out, and finishes the job`, async (t) => {
    const recording = 'sub-03/eeg/sub-03_task-rest_eeg.edf';
    mkdirSync(path.join(repo, 'sub-03', 'eeg'), { recursive: true });
    writeFileSync(path.join(repo, recording), largeRecording());
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '-q', '-m', 'a long recording');
    const startsOf = (worker: NdsProcess) => worker.logs.filter((e) => e.msg === 'recording conversion started' && e.dataset === id && e.path === recording);
    // Armed before the push: the worker that starts converting the new recording is killed the moment it says so.
    let killed: { victim: NdsProcess; at: number } | undefined;
    for (const worker of workers) {
      worker.child.stdout!.on('data', () => {
        if (killed || startsOf(worker).length === 0) return;
        worker.child.kill('SIGKILL');
        killed = { victim: worker, at: Date.now() };
      });
    }
    // Through nginx, as users push: it buffers the 7.7 MB pack and sends it on to whichever node it picks, which
    // streams it on to the holder when it is the other (test/git/forwarded-push.test.ts takes that path each time).
    const packsTaken = (proc: NdsProcess) => proc.logs.filter((e) => e.msg === 'request' && e.method === 'POST' && String(e.route).startsWith('/git')).length;
    const [before1, before2] = [packsTaken(api1), packsTaken(api2)];
    const pushed = await git(repo, 'push', '-q', remote(publicUrl, owner), 'main');
    assert.equal(pushed.status, 0, `${pushed.stderr}\n${gitLog()}`);
    t.diagnostic(`nginx sent the pack to ${packsTaken(api2) > before2 ? 'api2, which forwarded it to api1, the holder' : packsTaken(api1) > before1 ? 'api1, the holder' : 'neither node (yet logged)'}`);
    const { victim, at } = await until(async () => killed, 'a worker converting the new recording', 60_000);
    assert.equal(await victim.exited, null, 'killed, not exited');
    const survivor = workers.find((w) => w !== victim)!;

    // The other worker starts the recording again, and finishes the job.
    const again = await loggedBy(survivor, (e) => startsOf(survivor).includes(e), 'the recording started again', (LEASE_S + 30) * 1000);
    const commit = gitIn(repo, 'rev-parse', 'HEAD');
    const finished = await until(
      () => db.db.selectFrom('conversion_jobs').selectAll().where('dataset_id', '=', id).where('ref', '=', commit).where('state', 'in', ['done', 'failed']).executeTakeFirst(),
      'the job finished',
      30_000,
    ).catch(async (err: unknown) => {
      const jobs = await db.db.selectFrom('conversion_jobs').select(['id', 'ref', 'state', 'attempts', 'worker_id']).where('dataset_id', '=', id).execute();
      throw new Error(`${(err as Error).message}; jobs: ${JSON.stringify(jobs)}`);
    });
    const tookBack = ((again.time as number) - at) / 1000;
    t.diagnostic(`${victim.name} killed converting ${recording}; ${survivor.name} started it again ${tookBack.toFixed(1)} s later and finished the job ${((Date.now() - at) / 1000).toFixed(1)} s after the kill`);
    // The task's heartbeat was its start, just before the kill: across hosts it is lost only when that is a lease old.
    if (canUnshare) assert.ok(tookBack >= LEASE_S - 1, `taken back ${tookBack.toFixed(1)} s after the kill, before its lease ran out`);
    assert.ok(tookBack <= LEASE_S + 10, `taken back only ${tookBack.toFixed(1)} s after the kill (lease ${LEASE_S} s)`);
    assert.equal(finished.state, 'done', finished.error ?? '');
    assert.ok(ranBy(finished.worker_id, survivor), `finished by ${finished.worker_id}`);
    const task = await db.db.selectFrom('conversion_tasks').selectAll().where('job_id', '=', finished.id).where('path', '=', recording).executeTakeFirstOrThrow();
    assert.equal(task.state, 'done');
    assert.equal(task.attempts, 2, 'the recording was started by the killed worker, then again by the other');
    assert.ok(ranBy(task.worker_id, survivor));
    const recordings = await fetch(`${api2.url}/datasets/${id}/recordings`, { headers: { authorization: `Bearer ${owner}` } });
    assert.equal(recordings.status, 200);
    assert.ok(JSON.stringify(await recordings.json()).includes(recording), 'the new recording is in the catalogue');
  });

  it("the repository's node stopped: its git routes answer 503 with the reason through the other node, the rest keeps serving", async () => {
    api1.child.kill('SIGKILL');
    await api1.exited;
    const refs = await fetch(`${api2.url}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${owner}` } });
    assert.equal(refs.status, 503);
    assert.match(((await refs.json()) as { message: string }).message, /node that holds this dataset's git repository is not answering/);
    assert.ok(refs.headers.get('retry-after'));
    const cloned = await git(tmp, 'clone', '-q', remote(api2.url, owner), path.join(tmp, 'clone-2'));
    assert.notEqual(cloned.status, 0);
    assert.match(cloned.stderr, /503/);
    // A stranger still gets the unknown id's answer, not a 503 that would tell the dataset exists.
    const strange = await fetch(`${api2.url}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${stranger}` } });
    assert.equal(strange.status, 404);
    // Everything else of the dataset is still served by the other node, and through nginx.
    const page = await fetch(`${api2.url}/datasets/${id}`, { headers: { authorization: `Bearer ${owner}` } });
    assert.equal(page.status, 200);
    assert.equal(((await page.json()) as { id: string }).id, id);
    const recordings = await fetch(`${api2.url}/datasets/${id}/recordings`, { headers: { authorization: `Bearer ${owner}` } });
    assert.equal(recordings.status, 200, await recordings.clone().text());
    for (let i = 0; i < 2; i++) {
      const viaNginx = await fetch(`${publicUrl}/datasets/${published}`, { headers: { accept: 'application/json' } });
      assert.equal(viaNginx.status, 200);
      await viaNginx.arrayBuffer();
    }
  });
});
