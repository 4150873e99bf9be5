/**
 * A pushed tree is hostile input (docs/security.md, "Uploaded trees are hostile"). A verified account without
 * upload approval makes a sandbox dataset and pushes recordings whose files are links to a secret of the
 * server (`<DATA_DIR>/object-signing-secret`, the key of presigned URLs and object tokens) or name it from a
 * header: none of its bytes ever come back through the signal route, and the owner sees why each recording
 * was not converted. A good recording of the same push converts as usual.
 */
import assert from 'node:assert/strict';
import childProcess, { execFileSync } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { objectUrlSigner } from '../../src/objects/signing-secret.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { fixtures, gitIn, gitRun, pushRemote } from './support.js';
import { repositoryDir } from '../../src/git/repository-dir.js';

/** A one-channel INT_16 BrainVision header: any file of 2 bytes or more would read as samples. */
function vhdr(dataFile: string): string {
  return [
    'Brain Vision Data Exchange Header File Version 1.0',
    '',
    '[Common Infos]',
    'Codepage=UTF-8',
    `DataFile=${dataFile}`,
    'DataFormat=BINARY',
    'DataOrientation=MULTIPLEXED',
    'NumberOfChannels=1',
    'SamplingInterval=1000',
    '',
    '[Binary Infos]',
    'BinaryFormat=INT_16',
    '',
    '[Channel Infos]',
    'Ch1=Leak,,1,µV',
    '',
  ].join('\r\n');
}

const rec = (sub: string, ext: string) => `sub-${sub}/eeg/sub-${sub}_task-a_eeg${ext}`;

describe('a pushed tree that points at secrets of the server', () => {
  let server: TestServer;
  let attacker: TestAccount;
  let work: string;
  let id: string;
  let secret: Buffer;

  before(async () => {
    server = await startTestServer();
    // The server's own secret, made as the server makes it.
    objectUrlSigner({ dataDir: server.dataDir, objectSigningSecret: undefined });
    const secretFile = path.join(server.dataDir, 'object-signing-secret');
    secret = readFileSync(secretFile);
    attacker = await createAccount(server, { status: 'verified' });
    const made = await attacker.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'innocent' }) });
    const body = await made.text();
    assert.equal(made.status, 201, body);
    id = (JSON.parse(body) as { id: string }).id;
    assert.match(id, /^sb\d{6}$/, 'an account without upload approval gets a sandbox dataset');

    work = mkdtempSync(path.join(os.tmpdir(), 'nds-hostile-'));
    const file = (rel: string, content: string | Buffer) => {
      mkdirSync(path.dirname(path.join(work, rel)), { recursive: true });
      writeFileSync(path.join(work, rel), content);
    };
    const link = (rel: string, target: string) => {
      mkdirSync(path.dirname(path.join(work, rel)), { recursive: true });
      symlinkSync(target, path.join(work, rel));
    };
    const edf = path.join(fixtures, 'mne-python/edf/test.edf');
    file('dataset_description.json', JSON.stringify({ Name: 'innocent', BIDSVersion: '1.9.0' }));
    // 01: the data file is a link to the secret.
    file(rec('01', '.vhdr'), vhdr(path.basename(rec('01', '.eeg'))));
    link(rec('01', '.eeg'), secretFile);
    // 02: the header climbs out of the tree, and a link of the name it ends in waits beside it.
    file(rec('02', '.vhdr'), vhdr(`../../../../../../../../../../..${secretFile}`));
    link('sub-02/eeg/object-signing-secret', secretFile);
    // 03: the header names the secret by its absolute path.
    file(rec('03', '.vhdr'), vhdr(secretFile));
    // 04: the header names a file through a linked folder.
    file(rec('04', '.vhdr'), vhdr('server/object-signing-secret'));
    link('sub-04/eeg/server', server.dataDir);
    // 05-07: good recordings with a linked sidecar each.
    for (const sub of ['05', '06', '07']) {
      mkdirSync(path.join(work, `sub-${sub}/eeg`), { recursive: true });
      copyFileSync(edf, path.join(work, rec(sub, '.edf')));
    }
    link('sub-05/eeg/sub-05_task-a_channels.tsv', secretFile);
    link('sub-06/eeg/sub-06_task-a_events.tsv', secretFile);
    link('sub-07/eeg/sub-07_task-a_eeg.json', secretFile);
    // 08: a linked folder of recordings; 09: a good recording, the control.
    link('sub-08', server.dataDir);
    mkdirSync(path.join(work, 'sub-09/eeg'), { recursive: true });
    copyFileSync(edf, path.join(work, rec('09', '.edf')));
    gitIn(work, 'init', '-q');
    gitIn(work, 'add', '-A');
    gitIn(work, 'commit', '-q', '-m', 'recordings');

    const remote = pushRemote(server.url, id, attacker.key);
    const pushed = await gitRun(work, 'push', '-q', remote, 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    for (let waited = 0; !(await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).executeTakeFirst()); waited += 50) {
      assert.ok(waited < 20_000, 'the push queued no conversion');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await server.worker!.idle();
  });
  after(async () => {
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('never answers the secret through the signal route', async () => {
    const leaked = Array.from({ length: Math.floor(secret.length / 2) }, (_, i) => secret.readInt16LE(2 * i));
    for (const sub of ['01', '02', '03', '04']) {
      const res = await attacker.api(`/datasets/${id}/signal?path=${rec(sub, '.vhdr')}&start_sample=0&n_samples=${leaked.length}&format=json`);
      const body = await res.text();
      assert.notEqual(res.status, 200, `${rec(sub, '.vhdr')} answered ${body.slice(0, 200)}`);
      assert.ok(!body.includes(leaked.slice(0, 4).join(',')), 'the answer holds the secret');
    }
    for (const answer of [await attacker.api(`/datasets/${id}/recordings`), await attacker.api(`/datasets/${id}`)]) {
      assert.ok(!(await answer.text()).includes(secret.toString('utf8').trim()), 'an answer holds the secret');
    }
  });

  it('tells the owner why each linked recording was not converted, and converts the good one', async () => {
    const d = (await (await attacker.api(`/datasets/${id}`)).json()) as { zarr_status: string };
    assert.equal(d.zarr_status, 'ready');
    const listed = (await (await attacker.api(`/datasets/${id}/recordings`)).json()) as {
      recordings: Array<{ path: string }>;
      failures: Array<{ path: string; code: string; reason: string }>;
    };
    assert.deepEqual(listed.recordings.map((r) => r.path), [rec('09', '.edf')]);
    const reasons = new Map(listed.failures.map((f) => [f.path, f]));
    const linked = /is a symbolic link in the repository/;
    assert.match(reasons.get(rec('01', '.vhdr'))?.reason ?? '', linked);
    assert.match(reasons.get(rec('02', '.vhdr'))?.reason ?? '', linked);
    // A name that climbs out or is absolute means the file of that name beside the header, which is not there.
    assert.match(reasons.get(rec('03', '.vhdr'))?.reason ?? '', /does not exist/);
    assert.match(reasons.get(rec('04', '.vhdr'))?.reason ?? '', /does not exist/);
    assert.match(reasons.get(rec('05', '.edf'))?.reason ?? '', /sub-05_task-a_channels\.tsv is a symbolic link/);
    assert.match(reasons.get(rec('06', '.edf'))?.reason ?? '', /sub-06_task-a_events\.tsv is a symbolic link/);
    assert.match(reasons.get(rec('07', '.edf'))?.reason ?? '', /sub-07_task-a_eeg\.json is a symbolic link/);
    for (const f of listed.failures) assert.equal(f.code, 'file_read_error', f.path);
    // Nothing under the linked folder sub-08 was looked at.
    assert.ok(listed.failures.every((f) => !f.path.startsWith('sub-08/')));
  });
});

/**
 * Counts the bytes each `git` this process starts writes to its stdout, by subcommand, while `run` runs: what
 * the server reads of a repository. `child_process.spawn` is wrapped (the server's `spawnGit` holds it through
 * an ESM binding, kept in step by `syncBuiltinESMExports`).
 */
async function countGitOutput<T>(run: () => Promise<T>): Promise<{ result: T; bytes: Map<string, number> }> {
  const bytes = new Map<string, number>();
  const original = childProcess.spawn;
  (childProcess as { spawn: unknown }).spawn = (command: string, args: readonly string[], options: unknown) => {
    const child = (original as (...a: unknown[]) => childProcess.ChildProcess)(command, args, options);
    const sub = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '--git-dir');
    if (command === 'git' && sub) child.stdout?.on('data', (chunk: Buffer) => bytes.set(sub, (bytes.get(sub) ?? 0) + chunk.length));
    return child;
  };
  syncBuiltinESMExports();
  try {
    return { result: await run(), bytes };
  } finally {
    (childProcess as { spawn: unknown }).spawn = original;
    syncBuiltinESMExports();
  }
}

describe('a pushed tree that costs more than it weighs', () => {
  let server: TestServer;
  let attacker: TestAccount;
  const work: string[] = [];

  before(async () => {
    // Fewer files than the default million, to keep the test short: the limit's use is the same.
    server = await startTestServer({ env: { MAX_TREE_FILES: '20000', MAX_GIT_FILE_BYTES: String(4 << 20) } });
    attacker = await createAccount(server, { status: 'verified' });
  });
  after(async () => {
    await server?.close();
    for (const dir of work) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A sandbox dataset whose `main` is pushed at the commit `build` makes. With `heldBefore`, its objects are
   * written into the repository's folder first, as a repository pushed to before decision 0054 may hold them
   * (a push now refuses a file past MAX_GIT_FILE_BYTES), and the push moves `main` only.
   */
  async function sandboxWith(build: (dir: string) => string, options: { heldBefore?: boolean } = {}): Promise<{ id: string; commit: string }> {
    const made = await attacker.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'heavy' }) });
    const { id } = (await made.json()) as { id: string };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-heavy-'));
    work.push(dir);
    gitIn(dir, 'init', '-q');
    const commit = build(dir);
    const remote = pushRemote(server.url, id, attacker.key);
    if (options.heldBefore) {
      // A first push of another branch makes the repository (converting nothing: `main` does not move).
      const seed = gitIn(dir, 'commit-tree', gitIn(dir, 'mktree'), '-m', 'seed');
      assert.equal((await gitRun(dir, 'push', '-q', remote, `${seed}:refs/heads/seed`)).status, 0);
      gitIn(dir, 'push', '-q', repositoryDir(server.config.gitDir, id), `${commit}:refs/heads/held`);
    }
    const pushed = await gitRun(dir, 'push', '-q', remote, `${commit}:refs/heads/main`);
    assert.equal(pushed.status, 0, pushed.stderr);
    return { id, commit };
  }

  async function conversionOf(id: string): Promise<{ zarr_status: string; zarr_error: string | null }> {
    for (let waited = 0; !(await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).executeTakeFirst()); waited += 50) {
      assert.ok(waited < 20_000, 'the push queued no conversion');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await server.worker!.idle();
    return (await (await attacker.api(`/datasets/${id}`)).json()) as { zarr_status: string; zarr_error: string | null };
  }

  it('refuses a tree of more files than MAX_TREE_FILES made of a few objects (a tree naming one subtree over and over)', async () => {
    // 32 files under 3 levels of 16 folders that are all the same tree: 5 objects, 2^17 paths.
    const { id, commit } = await sandboxWith((dir) => {
      const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: 'x', encoding: 'utf8' }).trim();
      let tree = execFileSync('git', ['mktree'], { cwd: dir, input: Array.from({ length: 32 }, (_, i) => `100644 blob ${blob}\tf${i}.txt\n`).join(''), encoding: 'utf8' }).trim();
      for (let level = 0; level < 3; level++) {
        tree = execFileSync('git', ['mktree'], { cwd: dir, input: Array.from({ length: 16 }, (_, i) => `040000 tree ${tree}\td${i}\n`).join(''), encoding: 'utf8' }).trim();
      }
      return gitIn(dir, 'commit-tree', tree, '-m', '131,072 paths').trim();
    });
    // Converted, so that its owner is told why nothing is there: nothing of the tree was written.
    const dataset = await conversionOf(id);
    assert.equal(dataset.zarr_status, 'failed');
    assert.match(dataset.zarr_error ?? '', new RegExp(`Commit ${commit} lists more than 20,000 files; nds converts trees of up to 20,000 files\\.`));
    // Nor does a version list it.
    const version = await attacker.api(`/datasets/${id}/versions`, { method: 'POST', body: JSON.stringify({ version: '1.0.0', commit }) });
    assert.equal(version.status, 400);
    const refused = (await version.json()) as { error: string; details: string[] };
    assert.equal(refused.error, 'validation_failed');
    assert.deepEqual(refused.details, [`commit ${commit}: its tree lists more than 20,000 files, the most a version may hold here`]);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  });

  it('does not read or convert a recording file larger in git itself than MAX_GIT_FILE_BYTES (zeros, packed small)', async () => {
    const { id } = await sandboxWith((dir) => {
      mkdirSync(path.join(dir, 'sub-01/eeg'), { recursive: true });
      mkdirSync(path.join(dir, 'sub-02/eeg'), { recursive: true });
      writeFileSync(path.join(dir, 'dataset_description.json'), JSON.stringify({ Name: 'zeros', BIDSVersion: '1.9.0' }));
      copyFileSync(path.join(fixtures, 'mne-python/edf/test.edf'), path.join(dir, rec('01', '.edf')));
      // 24 MiB of zeros: about 24 KB in the pack.
      writeFileSync(path.join(dir, 'sub-02/eeg/sub-02_task-a_eeg.edf'), Buffer.alloc(24 << 20));
      gitIn(dir, 'add', '-A');
      gitIn(dir, 'commit', '-q', '-m', 'zeros');
      return gitIn(dir, 'rev-parse', 'HEAD').trim();
    }, { heldBefore: true });
    const { result: dataset, bytes } = await countGitOutput(() => conversionOf(id));
    assert.equal(dataset.zarr_status, 'ready');
    const listed = (await (await attacker.api(`/datasets/${id}/recordings`)).json()) as { recordings: Array<{ path: string }>; failures: Array<{ path: string; code: string; reason: string }> };
    assert.deepEqual(listed.recordings.map((r) => r.path), [rec('01', '.edf')]);
    const failure = listed.failures.find((f) => f.path === 'sub-02/eeg/sub-02_task-a_eeg.edf');
    assert.equal(failure?.code, 'file_read_error');
    assert.match(failure?.reason ?? '', /^sub-02\/eeg\/sub-02_task-a_eeg\.edf holds 25,165,824 bytes in git itself, more than the 4,194,304 nds reads from git \(MAX_GIT_FILE_BYTES\): make it a git-lfs pointer/);
    // The good recording's 0.3 MB come through cat-file; the 24 MiB never do.
    assert.ok((bytes.get('cat-file') ?? 0) < 4 << 20, `the conversion read ${bytes.get('cat-file')} bytes of blobs`);
  });

  it('does not read the target of a link longer than a path can be', async () => {
    const { id } = await sandboxWith((dir) => {
      mkdirSync(path.join(dir, 'sub-01/eeg'), { recursive: true });
      writeFileSync(path.join(dir, 'dataset_description.json'), JSON.stringify({ Name: 'link', BIDSVersion: '1.9.0' }));
      copyFileSync(path.join(fixtures, 'mne-python/edf/test.edf'), path.join(dir, rec('01', '.edf')));
      gitIn(dir, 'add', '-A');
      // A link (mode 120000) whose "target" is 24 MiB of one byte: a few KB in the pack.
      const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: Buffer.alloc(24 << 20, 0x61), encoding: 'utf8' }).trim();
      gitIn(dir, 'update-index', '--add', '--cacheinfo', `120000,${blob},sub-01/eeg/sub-01_task-a_channels.tsv`);
      gitIn(dir, 'commit', '-q', '-m', 'a long link');
      return gitIn(dir, 'rev-parse', 'HEAD').trim();
    }, { heldBefore: true });
    const { result: dataset, bytes } = await countGitOutput(() => conversionOf(id));
    assert.equal(dataset.zarr_status, 'ready');
    const listed = (await (await attacker.api(`/datasets/${id}/recordings`)).json()) as { failures: Array<{ path: string; reason: string }> };
    assert.match(listed.failures.find((f) => f.path === rec('01', '.edf'))?.reason ?? '', /sub-01_task-a_channels\.tsv is a symbolic link/);
    // The recording's own 0.3 MB come through cat-file; the link's 24 MiB never do.
    assert.ok((bytes.get('cat-file') ?? 0) < 4 << 20, `the conversion read ${bytes.get('cat-file')} bytes of blobs`);
  });
});
