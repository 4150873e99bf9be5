import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
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

describe('a push larger than MAX_GIT_PUSH_BYTES', () => {
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
    server = await startTestServer({ env: { MAX_GIT_PUSH_BYTES: String(1024 ** 2) } });
    owner = await createAccount(server);
    repo = makeBidsRepo();
    await insertDatasetRows(server.deps.db, { id, name: 'Big push', owner_id: owner.user.id, visibility: 'private' });
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('is refused by git as it arrives, keeping nothing of it; a push within the limit goes through', async () => {
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
});
