/**
 * Pushes whose objects inflate to far more than their pack (decision 0054): a file of zeros past
 * MAX_GIT_FILE_BYTES, many files that together hold more than a push may bring, a delta whose result is a
 * gigabyte. Before, git took each of them (the repository grew by kilobytes on disk, and every reader would
 * inflate them again); the delta cost index-pack a gigabyte of memory. Now each is refused before any ref
 * moves, the client reads why, and nothing of the push stays on disk.
 */
import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { gitIn, gitRun, makeBidsRepo } from '../conversion/support.js';
import { deltaBombPack, readReceivePackAnswer, receivePackBody, zeroBlobsPack } from './crafted-packs.js';

const MIB = 1024 ** 2;

describe('pushes whose objects inflate past the bounds of a push', () => {
  let server: TestServer;
  let owner: TestAccount;
  let repo: string;
  let hosted: string;
  let head: string;
  const id = 'nd000361';
  const remote = () => {
    const u = new URL(`${server.url}/git/${id}.git`);
    u.username = 'nds';
    u.password = owner.key;
    return u.toString();
  };
  /** Every file and folder of the repository's objects. */
  const objectEntries = () => readdirSync(path.join(hosted, 'objects'), { recursive: true }).map(String).sort();
  /** Waits until every push has ended and given back its grant of room: git has exited, its quarantine gone. */
  const pushesSettled = async () => {
    for (const deadline = Date.now() + 20_000; ; ) {
      const { rows } = await sql<{ n: number }>`select count(*) as n from storage_grants where object_key like 'push/%'`.execute(server.deps.db);
      if (Number(rows[0]!.n) === 0) return;
      assert.ok(Date.now() < deadline, 'the push ended within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  /** Sends `pack` as the push of a new branch `bomb` at `main`'s commit: the objects are extra, as a client may send them. */
  const pushPack = async (pack: Buffer) => {
    const res = await fetch(`${server.url}/git/${id}.git/git-receive-pack`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`nds:${owner.key}`).toString('base64')}`, 'content-type': 'application/x-git-receive-pack-request' },
      body: new Uint8Array(receivePackBody('refs/heads/bomb', head, pack)),
    });
    assert.equal(res.status, 200);
    const answer = readReceivePackAnswer(Buffer.from(await res.arrayBuffer()));
    await pushesSettled();
    return answer;
  };

  before(async () => {
    // A file may hold 1 MiB in git, and a push may send 1 MiB: it may then bring 4 MiB, inflated.
    server = await startTestServer({ env: { MAX_GIT_FILE_BYTES: String(MIB), MAX_GIT_PUSH_BYTES: String(MIB) } });
    owner = await createAccount(server);
    repo = makeBidsRepo();
    await insertDatasetRows(server.deps.db, { id, name: 'Bombs', owner_id: owner.user.id, visibility: 'private' });
    const first = await gitRun(repo, 'push', '-q', remote(), 'main');
    assert.equal(first.status, 0, first.stderr);
    hosted = repositoryDir(server.config.gitDir, id);
    head = gitIn(repo, 'rev-parse', 'HEAD');
    await pushesSettled();
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  it('refuses a file larger than MAX_GIT_FILE_BYTES, naming its blob and git-lfs to the client, and keeps nothing of it', async () => {
    const before = objectEntries();
    // 2 MiB of zeros: a pack of a few kilobytes.
    writeFileSync(path.join(repo, 'zeros.bin'), Buffer.alloc(2 * MIB));
    gitIn(repo, 'add', 'zeros.bin');
    gitIn(repo, 'commit', '-qm', 'zeros');
    const blob = gitIn(repo, 'rev-parse', 'HEAD:zeros.bin');
    const pushed = await gitRun(repo, 'push', remote(), 'main');
    await pushesSettled();
    assert.notEqual(pushed.status, 0);
    assert.match(pushed.stderr, new RegExp(`remote: nds: blob ${blob} holds 2097152 bytes \\(2\\.0 MiB\\), more than the 1048576 bytes a file may hold in git itself here \\(MAX_GIT_FILE_BYTES\\)`));
    assert.match(pushed.stderr, /remote: nds: Large files go through git-lfs/);
    assert.match(pushed.stderr, /\[remote rejected\] main -> main \(pre-receive hook declined\)/);
    assert.equal(gitIn(hosted, 'rev-parse', 'refs/heads/main'), head, 'main has not moved');
    assert.deepEqual(objectEntries(), before, 'nothing of the push stayed');
    gitIn(repo, 'reset', '-q', '--hard', head);
  });

  it('takes a file of exactly MAX_GIT_FILE_BYTES', async () => {
    writeFileSync(path.join(repo, 'most.bin'), Buffer.alloc(MIB));
    gitIn(repo, 'add', 'most.bin');
    gitIn(repo, 'commit', '-qm', 'the most a file may hold');
    const pushed = await gitRun(repo, 'push', '-q', remote(), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    head = gitIn(repo, 'rev-parse', 'HEAD');
    assert.equal(gitIn(hosted, 'rev-parse', 'refs/heads/main'), head);
    await pushesSettled();
  });

  it('refuses objects that together hold more than a push may bring, however few bytes their pack takes', async () => {
    const before = objectEntries();
    // Eight files of 768 KiB of zeros, each within MAX_GIT_FILE_BYTES: 6 MiB from a pack of about 7 KB.
    const { report, messages } = await pushPack(zeroBlobsPack(8, 768 * 1024));
    assert.deepEqual(report, ['unpack ok', 'ng refs/heads/bomb pre-receive hook declined']);
    assert.match(messages, /nds: the objects of this push hold \d+ bytes uncompressed, more than the 4194304 bytes one push may bring/);
    assert.doesNotMatch(gitIn(hosted, 'show-ref'), /refs\/heads\/bomb/);
    assert.deepEqual(objectEntries(), before, 'nothing of the push stayed');
  });

  it('stops a delta built to a gigabyte at the memory bound of the push, and keeps nothing of it', async () => {
    const before = objectEntries();
    // A blob of 16 MiB of zeros and a delta copying it 64 times: about 20 KB sent, a gigabyte to build.
    const bomb = deltaBombPack(64);
    assert.ok(bomb.pack.length < 64 * 1024 && bomb.resultBytes > 1000 * MIB);
    const { report, messages } = await pushPack(bomb.pack);
    assert.notEqual(report[0], 'unpack ok', 'git took the pack');
    assert.match(report.at(-1) ?? '', /^ng refs\/heads\/bomb /);
    assert.match(messages, /Out of memory, malloc failed/);
    assert.doesNotMatch(gitIn(hosted, 'show-ref'), /refs\/heads\/bomb/);
    assert.deepEqual(objectEntries(), before, 'nothing of the push stayed');
  });

  it('takes an ordinary push after the refused ones, and pushes that bring no objects', async () => {
    writeFileSync(path.join(repo, 'README'), 'after the bombs\n');
    gitIn(repo, 'add', 'README');
    gitIn(repo, 'commit', '-qm', 'readme');
    const pushed = await gitRun(repo, 'push', '-q', remote(), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    assert.equal(gitIn(hosted, 'rev-parse', 'refs/heads/main'), gitIn(repo, 'rev-parse', 'HEAD'));
    // A branch at a commit the repository has (an empty pack), then its deletion (no pack at all).
    const branched = await gitRun(repo, 'push', '-q', remote(), 'main:refs/heads/copy');
    assert.equal(branched.status, 0, branched.stderr);
    const deleted = await gitRun(repo, 'push', '-q', remote(), ':refs/heads/copy');
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.doesNotMatch(gitIn(hosted, 'show-ref'), /refs\/heads\/copy/);
  });
});
