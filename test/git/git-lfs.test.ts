/**
 * The hosted repositories speak git-lfs: a dataset uploaded with `nds datasets upload` is cloned with plain
 * git, and Debian's `git-lfs` fetches its data files (`git lfs pull`) and uploads new ones (`git push` with
 * the pre-push hook), through the batch API and presigned URLs of the object store, authenticated by
 * `nds auth git-credential`. On the folder store and on radosgw.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, storeVariants } from '../datasets/support.js';

process.env.NDS_UPLOAD_HASH_CACHE = 'off';
const repoRoot = path.resolve(import.meta.dirname, '../..');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Asynchronous on purpose: the server under test answers in this process. */
function run(command: string, args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? repoRoot, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function storedBytes(server: TestServer, key: string): Promise<Buffer | undefined> {
  const o = await server.deps.objects.get(key);
  if (!o) return undefined;
  const chunks: Buffer[] = [];
  for await (const c of o.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

for (const variant of storeVariants) {
  describe(`git-lfs on the hosted repositories: ${variant.name}`, { skip: variant.skip }, () => {
    let server: TestServer;
    let cleanup: () => Promise<void>;
    let owner: TestAccount;
    let tmp: string;
    let id: string;
    let gitEnv: (key: string) => NodeJS.ProcessEnv;
    const edf = randomBytes(200_000);
    const bdf = randomBytes(50_000);

    const git = (cwd: string, key: string, ...args: string[]) => run('git', args, { cwd, env: gitEnv(key) });
    const nds = (key: string, ...args: string[]) => run(process.execPath, ['bin/nds.js', ...args], { env: { ...process.env, NDS_API_URL: server.url, NDS_API_KEY: key } });
    const batch = (key: string | undefined, body: unknown) =>
      fetch(`${server.url}/git/${id}.git/info/lfs/objects/batch`, {
        method: 'POST',
        headers: {
          accept: 'application/vnd.git-lfs+json',
          'content-type': 'application/vnd.git-lfs+json',
          ...(key ? { authorization: `Basic ${Buffer.from(`nds:${key}`).toString('base64')}` } : {}),
        },
        body: JSON.stringify(body),
      });

    before(async () => {
      const s = await variant.setup();
      cleanup = s.cleanup;
      server = await startTestServer({ env: s.env });
      owner = await createUploader(server);
      tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-lfs-'));
      const home = path.join(tmp, 'home');
      mkdirSync(home);
      // A git of its own: no system or user configuration but git-lfs's filters and the nds credential helper.
      gitEnv = (key) => ({
        PATH: process.env.PATH,
        HOME: home,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_TERMINAL_PROMPT: '0',
        NDS_API_URL: server.url,
        NDS_API_KEY: key,
        GIT_AUTHOR_NAME: 'T',
        GIT_AUTHOR_EMAIL: 't@example.org',
        GIT_COMMITTER_NAME: 'T',
        GIT_COMMITTER_EMAIL: 't@example.org',
      });
      const installed = await run('git', ['lfs', 'install'], { env: gitEnv('') });
      assert.equal(installed.code, 0, installed.stderr);
      const helper = `!'${process.execPath}' '${path.join(repoRoot, 'bin/nds.js')}' auth git-credential`;
      assert.equal((await run('git', ['config', '--global', 'credential.helper', helper], { env: gitEnv('') })).code, 0);

      const made = await nds(owner.key, 'datasets', 'create', 'LFS dataset', '--json');
      assert.equal(made.code, 0, made.stderr);
      id = JSON.parse(made.stdout).id;
      const folder = path.join(tmp, 'src');
      const files: Record<string, Buffer> = {
        'sub-01/eeg/sub-01_task-rest_eeg.edf': edf,
        'sub-01/eeg/sub-01_task-rest_channels.tsv': Buffer.from('name\ttype\tunits\nFp1\tEEG\tuV\n'),
        'dataset_description.json': Buffer.from('{"Name": "LFS dataset", "BIDSVersion": "1.9.0"}\n'),
      };
      for (const [rel, bytes] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(folder, rel)), { recursive: true });
        writeFileSync(path.join(folder, rel), bytes);
      }
      const uploaded = await nds(owner.key, 'datasets', 'upload', id, folder, '--force', '--git', '--no-create-version', '--json');
      assert.equal(uploaded.code, 0, uploaded.stderr);
    });
    after(async () => {
      await server?.close();
      await cleanup?.();
      if (tmp) rmSync(tmp, { recursive: true, force: true });
    });

    it('git lfs pull in a plain clone fetches the data files, and leaves the work tree clean', async () => {
      const clone = path.join(tmp, 'pull');
      const cloned = await run('git', ['clone', '-q', `${server.url}/git/${id}.git`, clone], { env: { ...gitEnv(owner.key), GIT_LFS_SKIP_SMUDGE: '1' } });
      assert.equal(cloned.code, 0, cloned.stderr);
      const data = path.join(clone, 'sub-01/eeg/sub-01_task-rest_eeg.edf');
      assert.match(readFileSync(data, 'utf8'), /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:/);

      const pulled = await git(clone, owner.key, 'lfs', 'pull');
      assert.equal(pulled.code, 0, pulled.stderr);
      assert.ok(readFileSync(data).equals(edf), 'the data file holds its content after git lfs pull');
      assert.equal(readFileSync(path.join(clone, 'dataset_description.json'), 'utf8'), '{"Name": "LFS dataset", "BIDSVersion": "1.9.0"}\n');
      const status = await git(clone, owner.key, 'status', '--porcelain');
      assert.equal(status.stdout, '', 'nothing shows as changed');
      const listed = await git(clone, owner.key, 'lfs', 'ls-files', '--long');
      assert.match(listed.stdout, new RegExp(`${sha(edf)} \\* sub-01/eeg/sub-01_task-rest_eeg\\.edf`));
    });

    it('a clone with git-lfs installed smudges the data files at checkout', async () => {
      const clone = path.join(tmp, 'smudge');
      const cloned = await run('git', ['clone', '-q', `${server.url}/git/${id}.git`, clone], { env: gitEnv(owner.key) });
      assert.equal(cloned.code, 0, cloned.stderr);
      assert.ok(readFileSync(path.join(clone, 'sub-01/eeg/sub-01_task-rest_eeg.edf')).equals(edf));
    });

    it('git push uploads new data files through git lfs into the content objects', async () => {
      const clone = path.join(tmp, 'push');
      assert.equal((await run('git', ['clone', '-q', `${server.url}/git/${id}.git`, clone], { env: gitEnv(owner.key) })).code, 0);
      const rel = 'sub-02/eeg/sub-02_task-rest_eeg.bdf';
      mkdirSync(path.join(clone, 'sub-02/eeg'), { recursive: true });
      writeFileSync(path.join(clone, rel), bdf);
      assert.equal((await git(clone, owner.key, 'lfs', 'track', '*.bdf')).code, 0);
      assert.equal((await git(clone, owner.key, 'add', '-A')).code, 0);
      assert.equal((await git(clone, owner.key, 'commit', '-q', '-m', 'sub-02')).code, 0);
      assert.equal(await storedBytes(server, `${id}/objects/${sha(bdf)}`), undefined);

      const pushed = await git(clone, owner.key, 'push', '-q', 'origin', 'main');
      assert.equal(pushed.code, 0, pushed.stderr);
      assert.ok((await storedBytes(server, `${id}/objects/${sha(bdf)}`))?.equals(bdf), 'the content object holds the new file');
      const pointer = await git(clone, owner.key, 'show', `origin/main:${rel}`);
      assert.equal(pointer.stdout, `version https://git-lfs.github.com/spec/v1\noid sha256:${sha(bdf)}\nsize ${bdf.length}\n`);
      // Pushing again sends nothing: the batch answers the object as stored.
      const again = await git(clone, owner.key, 'lfs', 'push', '--all', 'origin');
      assert.equal(again.code, 0, again.stderr);
    });

    it('the batch API: credentials as for git, per-object errors, and no foreign hash algorithm', async () => {
      const stranger = await createAccount(server);
      const known = { oid: sha(edf), size: edf.length };
      const anonymous = await batch(undefined, { operation: 'download', objects: [known] });
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Basic/);
      assert.equal((await batch(stranger.key, { operation: 'download', objects: [known] })).status, 404);
      assert.equal((await batch('nds_not-a-key', { operation: 'download', objects: [known] })).status, 401);

      const missing = 'a'.repeat(64);
      const res = await batch(owner.key, { operation: 'download', transfers: ['basic'], objects: [known, { oid: missing, size: 3 }] });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/vnd.git-lfs+json');
      const answer = await res.json();
      assert.equal(answer.transfer, 'basic');
      assert.equal(answer.objects[0].oid, known.oid);
      const href = answer.objects[0].actions.download.href as string;
      const got = await fetch(href, { headers: answer.objects[0].actions.download.header ?? {} });
      assert.equal(got.status, 200);
      assert.ok(Buffer.from(await got.arrayBuffer()).equals(edf));
      assert.deepEqual(answer.objects[1], { oid: missing, size: 3, error: { code: 404, message: `Object ${missing} is not stored for ${id}.` } });

      const stored = await batch(owner.key, { operation: 'upload', objects: [known] });
      assert.deepEqual((await stored.json()).objects, [known]);
      const bad = await batch(owner.key, { operation: 'upload', objects: [{ oid: 'XYZ', size: 1 }] });
      assert.equal(bad.status, 400);
      assert.equal((await batch(owner.key, { operation: 'download', objects: [known], hash_algo: 'sha512' })).status, 409);
      // No file locking: git-lfs takes the 404 as "not supported" and pushes all the same.
      const locks = await fetch(`${server.url}/git/${id}.git/info/lfs/locks/verify`, { method: 'POST', headers: { 'content-type': 'application/vnd.git-lfs+json' }, body: '{}' });
      assert.equal(locks.status, 404);
      assert.match((await locks.json()).message, /no file locking/);
    });
  });
}
