/**
 * Pushes whose objects inflate to far more than their pack (decision 0054): a file of zeros past
 * MAX_GIT_FILE_BYTES, many files that together hold more than a push may bring, a delta whose result is a
 * gigabyte. Before, git took each of them (the repository grew by kilobytes on disk, and every reader would
 * inflate them again); the delta cost index-pack a gigabyte of memory. Now each is refused before any ref
 * moves, the client reads why, and nothing of the push stays on disk.
 * The bound of one object is of every object, not of blobs only: a commit message of megabytes is inflated whole
 * by every clone. And what is bounded is what the push brought: a thin pack's bases, which index-pack copies from
 * the repository into the push's quarantine, were counted as brought, so a push that cut a file the repository
 * held from before the bound was refused for the old file.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { receiveHooksDir } from '../../src/git/receive-checks.js';
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
  const remote = (dataset = id) => {
    const u = new URL(`${server.url}/git/${dataset}.git`);
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
    for (const dir of [repo, ...otherRepos]) rmSync(dir, { recursive: true, force: true });
  });

  const otherRepos: string[] = [];
  /** Another hosted dataset, whose repository holds the fixture's first commit, and its clone to push from. */
  const anotherHostedRepo = async (dataset: string) => {
    await insertDatasetRows(server.deps.db, { id: dataset, name: `Bounds ${dataset}`, owner_id: owner.user.id, visibility: 'private' });
    const clone = makeBidsRepo();
    otherRepos.push(clone);
    const first = await gitRun(clone, 'push', '-q', remote(dataset), 'main');
    assert.equal(first.status, 0, first.stderr);
    await pushesSettled();
    return { clone, hostedDir: repositoryDir(server.config.gitDir, dataset) };
  };

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

  it('refuses a commit larger than MAX_GIT_FILE_BYTES, naming it to the client, though its pack is small', async () => {
    const { clone, hostedDir } = await anotherHostedRepo('nd000362');
    const before = gitIn(hostedDir, 'rev-parse', 'refs/heads/main');
    // A message of 3 MiB, a few kilobytes in the pack: every clone would inflate and hold it whole.
    const message = `${clone}-message.txt`;
    writeFileSync(message, `big\n\n${'x'.repeat(3 * MIB)}\n`);
    gitIn(clone, 'commit', '-q', '--allow-empty', '-F', message);
    rmSync(message);
    const commit = gitIn(clone, 'rev-parse', 'HEAD');
    const pushed = await gitRun(clone, 'push', remote('nd000362'), 'main');
    await pushesSettled();
    assert.notEqual(pushed.status, 0, pushed.stderr);
    assert.match(pushed.stderr, new RegExp(`remote: nds: commit ${commit} holds \\d+ bytes \\(3\\.0 MiB\\), more than the 1048576 bytes one object may hold in git here \\(MAX_GIT_FILE_BYTES\\)`));
    assert.equal(gitIn(hostedDir, 'rev-parse', 'refs/heads/main'), before, 'main has not moved');
  });

  it('takes a push that cuts a file the repository holds from before the bound, sent as a thin pack against it', async () => {
    const { clone, hostedDir } = await anotherHostedRepo('nd000363');
    // 2 MiB of table, which the repository took before MAX_GIT_FILE_BYTES (decision 0054: such files stay):
    // written straight into the hosted repository, past the server.
    const table = path.join(clone, 'events.tsv');
    const lines = Array.from({ length: 120_000 }, (_, i) => `${(i * 0.25).toFixed(2)}\t0\tstim-${i % 17}`);
    writeFileSync(table, `${lines.join('\n')}\n`);
    gitIn(clone, 'add', 'events.tsv');
    gitIn(clone, 'commit', '-q', '-m', 'events, before the bound');
    gitIn(clone, 'push', '-q', hostedDir, 'main');
    assert.ok(Number(gitIn(clone, 'cat-file', '-s', 'HEAD:events.tsv')) > MIB);
    // The owner cuts it to its first quarter: a blob of about 500 KiB, sent as a delta against the old one.
    writeFileSync(table, `${lines.slice(0, 30_000).join('\n')}\n`);
    gitIn(clone, 'commit', '-q', '-am', 'events, first run only');
    assert.ok(Number(gitIn(clone, 'cat-file', '-s', 'HEAD:events.tsv')) < MIB);
    const pushed = await gitRun(clone, 'push', remote('nd000363'), 'main');
    await pushesSettled();
    assert.equal(pushed.status, 0, pushed.stderr);
    assert.equal(gitIn(hostedDir, 'rev-parse', 'refs/heads/main'), gitIn(clone, 'rev-parse', 'HEAD'));
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

// git kills a process of a push at its limits (spawn-git.ts): the hook must not read a listing cut short as a whole one.
describe('the push checks hook', () => {
  it('refuses a push whose objects it could not look through to the end', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'nds-hook-'));
    try {
      const hook = path.join(await receiveHooksDir(root), 'pre-receive');
      const repo = path.join(root, 'repo.git');
      execFileSync('git', ['init', '-q', '--bare', repo]);
      // A push's quarantine, as receive-pack sets it up for its hook: three small new objects.
      const quarantine = path.join(repo, 'objects', 'incoming-test');
      mkdirSync(quarantine);
      for (const text of ['a', 'b', 'c']) {
        execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: text, env: { ...process.env, GIT_OBJECT_DIRECTORY: quarantine } });
      }
      // A git whose every `cat-file` ends after its first line, as one killed at RLIMIT_CPU would.
      const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
      const cutBin = path.join(root, 'bin');
      mkdirSync(cutBin);
      writeFileSync(path.join(cutBin, 'git'), `#!/bin/sh\ncase "$1" in cat-file) "${realGit}" "$@" | head -n 1; exit 1;; esac\nexec "${realGit}" "$@"\n`, { mode: 0o755 });
      const runHook = (searchPath: string) =>
        spawnSync(hook, [], {
          cwd: repo,
          input: '',
          encoding: 'utf8',
          env: {
            ...process.env,
            PATH: searchPath,
            GIT_DIR: '.',
            GIT_QUARANTINE_PATH: quarantine,
            GIT_OBJECT_DIRECTORY: quarantine,
            GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(repo, 'objects'),
            GIT_CONFIG_COUNT: '2',
            GIT_CONFIG_KEY_0: 'nds.maxObjectBytes',
            GIT_CONFIG_VALUE_0: String(MIB),
            GIT_CONFIG_KEY_1: 'nds.maxContentBytes',
            GIT_CONFIG_VALUE_1: String(MIB),
          },
        });
      const whole = runHook(process.env.PATH ?? '');
      assert.equal(whole.status, 0, whole.stderr);
      const cut = runHook(`${cutBin}:${process.env.PATH ?? ''}`);
      assert.equal(cut.status, 1, cut.stderr);
      assert.match(cut.stderr, /nds: the objects of this push could not be read through; nothing of it was kept\./);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
