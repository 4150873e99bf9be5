/**
 * What a clone or fetch may cost the server (decision 0059). Anyone may clone a public dataset's repository, and
 * each clone runs git's pack-objects: before, any number ran at once, each with a thread a core, memory without
 * bound and no end in time (a client that stopped reading held its git for as long as it kept the connection).
 * Now one client runs at most GIT_FETCHES_PER_CLIENT at once and the process GIT_FETCHES_MAX (429 and 503, with
 * Retry-After, in words git shows), each git process of a clone runs under GIT_FETCH_MEMORY_BYTES and
 * GIT_FETCH_CPU_S, a clone that stalls is ended after GIT_FETCH_STALL_S, and a worker's fetch runs under the
 * same limits.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkoutSource, SourceError } from '../../src/conversion/source-checkout.js';
import { loadConfig } from '../../src/core/config.js';
import { systemClock } from '../../src/core/clock.js';
import type { DatasetRow } from '../../src/db/datasets-tables.js';
import type { Deps } from '../../src/deps.js';
import { createAccount } from '../support/accounts.js';
import { datasetRow, insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, gitRun, hostCopy, hostedSource, hostRepository, makeBidsRepo, startRepositoryNode } from '../conversion/support.js';

const MIB = 1024 ** 2;
/** The folders the clones of these tests were made in, removed at the end. */
const cloneFolders: string[] = [];
after(() => {
  for (const dir of cloneFolders) rmSync(dir, { recursive: true, force: true });
});

/** A committed repository of `files` (path → content) in a new temporary folder. */
function committed(files: Record<string, Buffer | string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-clone-src-'));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'content');
  return dir;
}

/** A public dataset `id` of the server whose hosted repository is a copy of `repo`. */
async function hostPublic(server: TestServer, id: string, repo: string): Promise<void> {
  const owner = await createAccount(server);
  await insertDatasetRows(server.deps.db, { id, name: `clones ${id}`, owner_id: owner.user.id, visibility: 'public' });
  hostCopy(server.config.gitDir, id, repo);
}

interface Cloned {
  status: number | null;
  stderr: string;
  dir: string;
}

/** `git clone` of `url` (anonymous, no prompts) into a new folder; `config` as `git -c`. */
function gitClone(url: string, config: string[] = [], extra: string[] = []): Promise<Cloned> {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'nds-clone-'));
  cloneFolders.push(folder);
  const dir = path.join(folder, 'clone');
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...config.flatMap((c) => ['-c', c]), 'clone', '-q', ...extra, url, dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stderr, dir }));
  });
}

/** The SHA-256 of each tracked file of a work tree, and its commit: what "the same repository" means here. */
function treeDigest(dir: string): { head: string; files: Record<string, string> } {
  const files: Record<string, string> = {};
  for (const rel of gitIn(dir, 'ls-files', '-z').split('\0').filter(Boolean)) files[rel] = createHash('sha256').update(readFileSync(path.join(dir, rel))).digest('hex');
  return { head: gitIn(dir, 'rev-parse', 'HEAD'), files };
}

/** The `git http-backend` processes this test process's server runs now (git is a child of this process). */
function backendsRunning(): number {
  const out = execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out.split('\n').filter((line) => /\bgit http-backend\b/.test(line)).length;
}

/** Waits for `done` to hold, looking every 50 ms, failing after `ms`. */
async function until(what: string, done: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await done()); ) {
    assert.ok(Date.now() < deadline, `${what}, within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A TCP relay in front of the server that can hold clones mid-transfer, as a client that stops reading does:
 * `hold(n)` makes the next `n` answers of 200 to a request for a pack (git-upload-pack's `fetch`) stop after
 * their header, the relay reading nothing more of them, so the server's git blocks writing the pack.
 * `letGo()` passes the rest on.
 */
class HoldingRelay {
  readonly #server: net.Server;
  readonly #held: Array<() => void> = [];
  readonly #sockets = new Set<net.Socket>();
  #toHold = 0;
  port = 0;

  constructor(target: number) {
    this.#server = net.createServer((client) => this.#relay(client, target));
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as net.AddressInfo).port;
    return `http://127.0.0.1:${this.port}`;
  }

  hold(n: number): void {
    this.#toHold = n;
  }

  get holding(): number {
    return this.#held.length;
  }

  letGo(): void {
    this.#toHold = 0;
    for (const go of this.#held.splice(0)) go();
  }

  async close(): Promise<void> {
    this.letGo();
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #relay(client: net.Socket, target: number): void {
    const upstream = net.connect(target, '127.0.0.1');
    this.#sockets.add(client).add(upstream);
    // The bytes of the request the next answer is to, as text, and the head of an answer being looked at.
    let request = '';
    let head: Buffer | undefined;
    client.on('data', (d: Buffer) => {
      request += d.toString('latin1');
      upstream.write(d);
    });
    const pass = (d: Buffer) => {
      if (head === undefined && request === '') return void client.write(d);
      head = head === undefined ? d : Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const answerHead = head.subarray(0, end + 4);
      const rest = head.subarray(end + 4);
      const asked = request;
      head = undefined;
      request = '';
      const forPack = /^POST [^ ]*\/git-upload-pack /.test(asked) && (asked.includes('command=fetch') || !asked.includes('command='));
      if (this.#toHold > 0 && forPack && answerHead.toString('latin1').startsWith('HTTP/1.1 200')) {
        this.#toHold--;
        client.write(answerHead);
        upstream.pause();
        this.#held.push(() => {
          client.write(rest);
          upstream.resume();
        });
        return;
      }
      client.write(Buffer.concat([answerHead, rest]));
    };
    upstream.on('data', pass);
    upstream.on('end', () => client.end());
    client.on('end', () => upstream.end());
    for (const s of [client, upstream]) {
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      s.on('close', () => {
        this.#sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
  }
}

describe('clones at once', () => {
  let server: TestServer;
  let relay: HoldingRelay;
  let relayed: string;
  let source: string;
  const id = 'nd000591';
  const other = ['http.extraHeader=X-Forwarded-For: 198.51.100.7'];

  before(async () => {
    // Two clones at once for one address; the relay's address is trusted to name another client.
    server = await startTestServer({ env: { GIT_FETCHES_PER_CLIENT: '2', GIT_FETCHES_MAX: '3', TRUSTED_PROXIES: '127.0.0.1' } });
    // 64 MiB that do not compress: more than every buffer between the server's git and a client that reads nothing.
    source = committed({ 'dataset_description.json': '{"Name": "clones"}\n', 'sourcedata/noise.bin': randomBytes(64 * MIB) });
    gitIn(source, 'gc', '-q');
    await hostPublic(server, id, source);
    relay = new HoldingRelay(server.config.port);
    relayed = `${await relay.start()}/git/${id}.git`;
  });
  after(async () => {
    relay.letGo();
    await relay.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('refuses the clones of one client past GIT_FETCHES_PER_CLIENT with 429, and the others finish, byte-identical', async () => {
    relay.hold(2);
    const clones = Array.from({ length: 6 }, () => {
      const run = gitClone(relayed);
      const entry = { run, ended: false };
      void run.then(() => (entry.ended = true));
      return entry;
    });
    try {
      // Two clones hold their transfers; every other one asked while they ran, and was refused.
      await until('every clone ended or held', () => clones.filter((c) => c.ended).length + relay.holding === clones.length);
      assert.equal(relay.holding, 2, 'two clones are held mid-transfer');

      // What a refused client reads: 429, when to try again, and why, as text git prints (`remote: ...`).
      const refused = await fetch(`${relayed}/info/refs?service=git-upload-pack`);
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '10');
      assert.match(refused.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(await refused.text(), /already runs 2 git clones or fetches from this server, the most it may at once \(GIT_FETCHES_PER_CLIENT\)/);
      assert.equal(server.deps.gitFetches.runningFor('127.0.0.1'), 2);

      // Another client is not refused for this one's clones.
      const another = await gitClone(relayed, other);
      assert.equal(another.status, 0, another.stderr);
    } finally {
      relay.letGo();
    }
    const ended = await Promise.all(clones.map((c) => c.run));
    const done = ended.filter((c) => c.status === 0);
    const failed = ended.filter((c) => c.status !== 0);
    assert.equal(done.length, 2, ended.map((c) => c.stderr).join('\n'));
    for (const c of failed) assert.match(c.stderr, /\b429\b/);
    // A refusal at git's first request is shown to the person cloning, in the server's words.
    assert.ok(failed.some((c) => /remote: Your address already runs 2 git clones/.test(c.stderr)), failed.map((c) => c.stderr).join('\n'));
    const expected = treeDigest(source);
    for (const c of done) assert.deepEqual(treeDigest(c.dir), expected);
    await until('every slot is given back', () => server.deps.gitFetches.running === 0);
  });

  it('refuses any client with 503 while the server serves GIT_FETCHES_MAX clones', async () => {
    relay.hold(3);
    const held = [gitClone(relayed), gitClone(relayed), gitClone(relayed, other)];
    try {
      await until('three clones held', () => relay.holding === 3);
      const busy = await fetch(`${relayed}/info/refs?service=git-upload-pack`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(busy.status, 503);
      assert.equal(busy.headers.get('retry-after'), '10');
      assert.match(await busy.text(), /already serves 3 git clones and fetches, the most it serves at once \(GIT_FETCHES_MAX\)/);
      const refused = await gitClone(relayed, ['http.extraHeader=X-Forwarded-For: 203.0.113.9']);
      assert.notEqual(refused.status, 0);
      assert.match(refused.stderr, /remote: This server already serves 3 git clones/);
    } finally {
      relay.letGo();
    }
    for (const c of await Promise.all(held)) assert.equal(c.status, 0, c.stderr);
  });
});

describe('a clone that stalls', () => {
  let server: TestServer;
  let relay: HoldingRelay;
  let source: string;
  const id = 'nd000592';

  before(async () => {
    server = await startTestServer({ env: { GIT_FETCHES_PER_CLIENT: '1', GIT_FETCH_STALL_S: '2' } });
    source = committed({ 'noise.bin': randomBytes(64 * MIB) });
    gitIn(source, 'gc', '-q');
    await hostPublic(server, id, source);
    relay = new HoldingRelay(server.config.port);
    await relay.start();
  });
  after(async () => {
    await relay.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('is ended after GIT_FETCH_STALL_S without a byte taken, and its client may clone again', async () => {
    const url = `http://127.0.0.1:${relay.port}/git/${id}.git`;
    relay.hold(1);
    const stalled = gitClone(url);
    await until('the clone is held', () => relay.holding === 1);
    const refused = await gitClone(url);
    assert.notEqual(refused.status, 0, 'a second clone while the first holds the one slot');
    assert.match(refused.stderr, /\b429\b/);
    // Nothing is read of the first; within seconds its git is ended and its slot given back.
    await until("the stalled clone's git ends", () => backendsRunning() === 0);
    await until('the slot is given back', () => server.deps.gitFetches.running === 0);
    const again = await gitClone(url);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(treeDigest(again.dir), treeDigest(source));
    relay.letGo();
    const first = await stalled;
    assert.notEqual(first.status, 0, 'the stalled clone did not get its whole pack');
  });
});

describe('the limits of a clone\'s git', () => {
  let server: TestServer;
  const repos: string[] = [];

  before(async () => {
    // 16 MiB of memory for each git process of a clone: enough for a small repository, not for a blob of 12 MB.
    server = await startTestServer({ env: { GIT_FETCH_MEMORY_BYTES: String(16 * MIB) } });
  });
  after(async () => {
    await server.close();
    for (const r of repos) rmSync(r, { recursive: true, force: true });
  });

  it('stops a clone whose git needs more memory than GIT_FETCH_MEMORY_BYTES, and serves the next clone', async () => {
    // A loose blob of 12 MB (under core.bigFileThreshold): pack-objects reads it whole to compress it.
    const large = committed({ 'noise.bin': randomBytes(12 * MIB) });
    repos.push(large);
    await hostPublic(server, 'nd000593', large);
    const failed = await gitClone(`${server.url}/git/nd000593.git`);
    assert.notEqual(failed.status, 0, 'the clone failed');
    // git tells the person cloning why, in its own words.
    assert.match(failed.stderr, /remote: fatal: Out of memory, malloc failed/);

    const small = makeBidsRepo();
    repos.push(small);
    await hostPublic(server, 'nd000594', small);
    const cloned = await gitClone(`${server.url}/git/nd000594.git`);
    assert.equal(cloned.status, 0, cloned.stderr);
    assert.deepEqual(treeDigest(cloned.dir), treeDigest(small));
    assert.equal(server.deps.gitFetches.running, 0);
  });
});

describe('a clone of an ordinary repository', () => {
  let server: TestServer;
  let repo: string;

  before(async () => {
    server = await startTestServer();
    repo = makeBidsRepo();
    await hostPublic(server, 'nd000595', repo);
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  // A partial clone fetches the history without the files' content, and each file's when it is checked out.
  it('serves an ordinary repository whole and as a partial clone (--filter=blob:none), byte-identical', async () => {
    const whole = await gitClone(`${server.url}/git/nd000595.git`);
    assert.equal(whole.status, 0, whole.stderr);
    assert.deepEqual(treeDigest(whole.dir), treeDigest(repo));
    const partial = await gitClone(`${server.url}/git/nd000595.git`, [], ['--filter=blob:none', '--no-checkout']);
    assert.equal(partial.status, 0, partial.stderr);
    assert.doesNotMatch(partial.stderr, /filtering not recognized by server/);
    const missing = gitIn(partial.dir, 'rev-list', '--objects', '--all', '--missing=print').split('\n').filter((l) => l.startsWith('?'));
    assert.ok(missing.length > 0, 'the blobs were left out');
    // The checkout fetches the content it lacks from the server, in this process: git must run asynchronously.
    const checkedOut = await gitRun(partial.dir, 'checkout', '-q', 'main');
    assert.equal(checkedOut.status, 0, checkedOut.stderr);
    assert.deepEqual(treeDigest(partial.dir), treeDigest(repo));
  });

  // `tree:1` and deeper, and `sparse:oid`, make the server walk every tree whatever it has prepared.
  it('refuses a partial clone by a filter that walks every tree, saying why', async () => {
    const deep = await gitClone(`${server.url}/git/nd000595.git`, [], ['--filter=tree:1']);
    assert.notEqual(deep.status, 0);
    assert.match(deep.stderr, /remote error: tree filter allows max depth 0, but got 1/);
  });
});

describe("a worker's fetch of a dataset's repository", () => {
  let tmp: string;
  let node: Awaited<ReturnType<typeof startRepositoryNode>>;
  const row = (id: string) => ({ ...datasetRow({ id, name: id, owner_id: 1, source_repo: hostedSource }), created_at: new Date(), updated_at: new Date() }) as unknown as DatasetRow;
  const depsWith = (env: Record<string, string>) => {
    const config = loadConfig({ DATA_DIR: path.join(tmp, 'data'), OBJECT_SIGNING_SECRET: 'the secret every node shares', ...env });
    return { config: { ...config, gitDir: path.join(tmp, 'holder-git') }, objects: undefined as unknown as Deps['objects'], db: undefined as unknown as Deps['db'], clock: systemClock };
  };

  before(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-worker-fetch-'));
    const config = depsWith({}).config;
    node = await startRepositoryNode(config.gitDir, config);
    // The node serves without limits: what fails below is the worker's own git. Two versions of a file of 12 MB,
    // the second sent as a delta of the first: index-pack holds both to build it.
    const noise = randomBytes(12 * MIB);
    const work = committed({ 'dataset_description.json': '{"Name": "fetched"}\n', 'noise.bin': noise });
    writeFileSync(path.join(work, 'noise.bin'), Buffer.concat([noise, Buffer.from('one more line\n')]));
    gitIn(work, 'commit', '-q', '-am', 'more noise');
    hostRepository(config.gitDir, 'nd000596', work);
  });
  after(async () => {
    await node.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('runs under GIT_FETCH_MEMORY_BYTES as a served clone does', async () => {
    const holder = async () => node.url;
    await assert.rejects(checkoutSource(depsWith({ GIT_FETCH_MEMORY_BYTES: String(16 * MIB) }), row('nd000596'), 'HEAD', { holder }), (err) => {
      assert.ok(err instanceof SourceError);
      assert.match(String((err.cause as Error).message), /Out of memory, malloc failed/);
      return true;
    });
    const checkout = await checkoutSource(depsWith({}), row('nd000596'), 'HEAD', { holder });
    try {
      assert.equal(readFileSync(path.join(checkout.dir, 'dataset_description.json'), 'utf8'), '{"Name": "fetched"}\n');
    } finally {
      await checkout.cleanup();
    }
  });
});
