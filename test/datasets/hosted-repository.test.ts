import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deflateSync, gzipSync } from 'node:zlib';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { serverLog } from '../support/server-log.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { gitIn, gitRun, makeBidsRepo } from '../conversion/support.js';

describe('hosted git repositories (smart HTTP)', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let repo: string;
  const id = 'nd000301';
  const log = serverLog();
  const remote = (key?: string) => {
    const u = new URL(`${server.url}/git/${id}.git`);
    if (key) {
      u.username = 'nds';
      u.password = key;
    }
    return u.toString();
  };

  before(async () => {
    server = await startTestServer({ env: { LOG_LEVEL: 'info' }, logDestination: log.destination });
    owner = await createAccount(server);
    stranger = await createAccount(server);
    repo = makeBidsRepo();
    await insertDatasetRows(server.deps.db, { id, name: 'Hosted', owner_id: owner.user.id, visibility: 'private' });
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('the owner pushes main; the push converts the recordings', async () => {
    const r = await gitRun(repo, 'push', '-q', remote(owner.key), 'main');
    assert.equal(r.status, 0, r.stderr);
    // The push is handled when git's process exits, after the answer: wait for its job in the queue.
    for (let waited = 0; !(await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).executeTakeFirst()); waited += 50) {
      assert.ok(waited < 20_000, 'the push queued no conversion');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await server.worker!.idle();
    const d = await server.deps.db.selectFrom('datasets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    // The hosted repository is named by a marker, never by its folder on the server.
    assert.equal(d.source_repo, 'hosted');
    assert.equal(d.zarr_status, 'ready');
    assert.equal(d.zarr_store_count, 2);
    assert.equal(d.zarr_source_commit, gitIn(repo, 'rev-parse', 'HEAD'));
  });

  it('a private repository: anonymous gets 401, a stranger 404 and cannot push; the owner clones', async () => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'nds-clone-'));
    try {
      const anon = await fetch(`${server.url}/git/${id}.git/info/refs?service=git-upload-pack`);
      assert.equal(anon.status, 401);
      assert.match(anon.headers.get('www-authenticate') ?? '', /^Basic/);
      assert.notEqual((await gitRun(scratch, 'clone', '-q', remote(), 'anon')).status, 0);
      const auth = `Basic ${Buffer.from(`x:${stranger.key}`).toString('base64')}`;
      const strange = await fetch(`${server.url}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: auth } });
      assert.equal(strange.status, 404);
      const push = await fetch(`${server.url}/git/${id}.git/info/refs?service=git-receive-pack`, { headers: { authorization: auth } });
      assert.equal(push.status, 404);
      const wrongKey = await fetch(`${server.url}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Basic ${Buffer.from('x:nds_wrong').toString('base64')}` } });
      assert.equal(wrongKey.status, 401);
      const cloned = await gitRun(scratch, 'clone', '-q', remote(owner.key), 'mine');
      assert.equal(cloned.status, 0, cloned.stderr);
      assert.equal(gitIn(path.join(scratch, 'mine'), 'rev-parse', 'HEAD'), gitIn(repo, 'rev-parse', 'HEAD'));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('a public repository is readable by anyone, still writable only by the owner', async () => {
    await server.deps.db.updateTable('datasets').set({ visibility: 'public' }).where('id', '=', id).execute();
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'nds-clone-'));
    try {
      assert.equal((await gitRun(scratch, 'clone', '-q', remote(), 'anon')).status, 0);
      const clone = path.join(scratch, 'anon');
      writeFileSync(path.join(clone, 'README.md'), 'changed\n');
      await gitRun(clone, 'commit', '-qam', 'readme');
      assert.notEqual((await gitRun(clone, 'push', '-q', remote(stranger.key), 'main')).status, 0);
      const jobsBefore = (await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).execute()).length;
      // A push that touches no data file is recorded, and converts nothing.
      const ok = await gitRun(clone, 'push', '-q', remote(owner.key), 'main');
      assert.equal(ok.status, 0, ok.stderr);
      // Handled once git's process has exited: wait until the server has decided about this push.
      const head = gitIn(clone, 'rev-parse', 'HEAD');
      const decision = await log.waitFor((e) => e.msg === 'push received' && e.dataset === id && e.after === head, 'decision about the push');
      assert.equal(decision.dispatched, false);
      const jobsAfter = (await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).execute()).length;
      assert.equal(jobsAfter, jobsBefore);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('paths outside the repository pattern are 404', async () => {
    assert.equal((await fetch(`${server.url}/git/../etc/passwd`)).status, 404);
    assert.equal((await fetch(`${server.url}/git/nd000301.git/../../x`)).status, 404);
    assert.equal((await fetch(`${server.url}/git/nd999999.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Basic ${Buffer.from(`x:${owner.key}`).toString('base64')}` } })).status, 404);
  });
});

describe('pushes that would cost the server more than they send', () => {
  let server: TestServer;
  let owner: TestAccount;
  let repo: string;
  const id = 'nd000302';
  const remote = () => {
    const u = new URL(`${server.url}/git/${id}.git`);
    u.username = 'nds';
    u.password = owner.key;
    return u.toString();
  };

  before(async () => {
    server = await startTestServer({ env: { MAX_GIT_PUSH_BYTES: String(1024 ** 2), MAX_GIT_PUSH_REFS: '5' } });
    owner = await createAccount(server);
    repo = makeBidsRepo();
    await insertDatasetRows(server.deps.db, { id, name: 'Big push', owner_id: owner.user.id, visibility: 'private' });
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('a pack larger than MAX_GIT_PUSH_BYTES is refused by git as it arrives, keeping nothing of it; a push within the limit goes through', async () => {
    const small = await gitRun(repo, 'push', '-q', remote(), 'main');
    assert.equal(small.status, 0, small.stderr);
    const before = gitIn(repo, 'rev-parse', 'HEAD');
    // 3 MiB that no compression makes smaller.
    writeFileSync(path.join(repo, 'noise.bin'), randomBytes(3 * 1024 ** 2));
    gitIn(repo, 'add', 'noise.bin');
    gitIn(repo, 'commit', '-qm', 'noise');
    const big = await gitRun(repo, 'push', '-q', remote(), 'main');
    assert.notEqual(big.status, 0);
    assert.match(big.stderr, /pack exceeds maximum allowed size/);
    const hosted = repositoryDir(server.config.gitDir, id);
    assert.equal(gitIn(hosted, 'rev-parse', 'refs/heads/main'), before, 'main has not moved');
    const packBytes = readdirSync(path.join(hosted, 'objects/pack')).reduce((sum, f) => sum + statSync(path.join(hosted, 'objects/pack', f)).size, 0);
    assert.ok(packBytes < 1024 ** 2, `the server kept ${packBytes} bytes of packs`);
    assert.equal(gitIn(hosted, 'count-objects', '-v').match(/^size-garbage: (\d+)/m)?.[1], '0');
    // The server answers on, and the owner's next push within the limit is taken.
    gitIn(repo, 'reset', '-q', '--hard', before);
    writeFileSync(path.join(repo, 'README'), 'small');
    gitIn(repo, 'add', 'README');
    gitIn(repo, 'commit', '-qm', 'readme');
    const next = await gitRun(repo, 'push', '-q', '--force', remote(), 'main');
    assert.equal(next.status, 0, next.stderr);
  });

  it('keeps a small pack of deltas as it came, not written out whole', async () => {
    // 60 files of 512 KiB that differ by a byte: a pack of 60 deltas against one blob, fewer than git's 100
    // objects for which it would write each object out on its own, whole.
    const base = randomBytes(512 * 1024);
    for (let i = 0; i < 60; i++) writeFileSync(path.join(repo, `copy-${i}.bin`), Buffer.concat([base, Buffer.from(String(i))]));
    gitIn(repo, 'add', '-A');
    gitIn(repo, 'commit', '-qm', 'copies');
    // A wide delta window makes every copy a delta of one blob: a pack of about 530 KB.
    const pushed = await gitRun(repo, '-c', 'pack.window=100', 'push', '-q', remote(), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    const objects = path.join(repositoryDir(server.config.gitDir, id), 'objects');
    const bytes = readdirSync(objects, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .reduce((sum, e) => sum + statSync(path.join(e.parentPath, e.name)).size, 0);
    assert.ok(bytes < 2 * 1024 ** 2, `a push of 60 deltas left ${bytes} bytes of objects`);
  });

  it('keeps nothing of a push whose client goes away in the middle of its pack', async () => {
    const objects = path.join(repositoryDir(server.config.gitDir, id), 'objects');
    const entries = () => readdirSync(objects, { recursive: true }).map(String).sort();
    const before = entries();
    const head = gitIn(repo, 'rev-parse', 'HEAD');
    const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line;
    // A pack announced with two objects: the first whole (a 300 KiB blob), the second cut off.
    const size = 300 * 1024;
    const header = Buffer.alloc(12);
    header.write('PACK', 0);
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(2, 8);
    const sizeBytes = [(3 << 4) | (size & 0x0f)];
    for (let rest = size >> 4; rest > 0; rest >>= 7) {
      sizeBytes[sizeBytes.length - 1]! |= 0x80;
      sizeBytes.push(rest & 0x7f);
    }
    const blob = deflateSync(randomBytes(size));
    const req = http.request(`${server.url}/git/${id}.git/git-receive-pack`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`nds:${owner.key}`).toString('base64')}`,
        'content-type': 'application/x-git-receive-pack-request',
        'transfer-encoding': 'chunked',
      },
    });
    req.on('error', () => {});
    req.write(Buffer.concat([Buffer.from(`${pkt(`${'0'.repeat(40)} ${head} refs/heads/cut\0report-status\n`)}0000`), header, Buffer.from(sizeBytes), blob, Buffer.from(sizeBytes), blob.subarray(0, 1000)]));
    // git has the first object when a folder of the push appears; then the client goes away.
    const deadline = Date.now() + 10_000;
    while (entries().length === before.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.notDeepEqual(entries(), before, 'git began to receive the pack');
    req.destroy();
    while (entries().length !== before.length && Date.now() < deadline + 10_000) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(entries(), before, 'what git had received is removed');
    assert.doesNotMatch(gitIn(repositoryDir(server.config.gitDir, id), 'show-ref'), /refs\/heads\/cut/);
  });

  it('refuses a push naming more refs than MAX_GIT_PUSH_REFS before git sees it, gzip-encoded or not', async () => {
    const hosted = repositoryDir(server.config.gitDir, id);
    const refsBefore = gitIn(hosted, 'show-ref');
    const names = ['b1', 'b2', 'b3', 'b4', 'b5', 'b6'];
    for (const name of names) gitIn(repo, 'branch', '-f', name);
    const six = await gitRun(repo, 'push', '-q', remote(), ...names);
    assert.notEqual(six.status, 0);
    assert.match(six.stderr, /413/);
    assert.equal(gitIn(hosted, 'show-ref'), refsBefore, 'no ref was made');
    // The same list gzip-encoded, as a raw request: refused alike, whatever it weighs on the wire.
    const head = gitIn(repo, 'rev-parse', 'HEAD');
    const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line;
    const list = names.map((name, i) => pkt(`${'0'.repeat(40)} ${head} refs/heads/${name}${i === 0 ? '\0report-status' : ''}\n`)).join('') + '0000';
    const res = await fetch(`${server.url}/git/${id}.git/git-receive-pack`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`nds:${owner.key}`).toString('base64')}`, 'content-type': 'application/x-git-receive-pack-request', 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.from(list)),
    });
    assert.equal(res.status, 413);
    assert.match(((await res.json()) as { message: string }).message, /at most 5 refs \(MAX_GIT_PUSH_REFS\)/);
    assert.equal(gitIn(hosted, 'show-ref'), refsBefore);
    const notGzip = await fetch(`${server.url}/git/${id}.git/git-receive-pack`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`nds:${owner.key}`).toString('base64')}`, 'content-type': 'application/x-git-receive-pack-request', 'content-encoding': 'gzip' },
      body: list,
    });
    assert.equal(notGzip.status, 400);
    // Five at once are taken.
    const five = await gitRun(repo, 'push', '-q', remote(), ...names.slice(0, 5));
    assert.equal(five.status, 0, five.stderr);
  });
});
