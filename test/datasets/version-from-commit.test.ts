/**
 * `POST /datasets/:id/versions {version, commit}` over real HTTP, on a real repository pushed to the
 * server's git smart HTTP: plain blobs, an executable, a duplicate, an empty file, a git-annex symlink and a
 * git-lfs pointer; the manifest is checked against hashes of the files on disk.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startNds } from '../support/cli.js';
import { createUploader, json } from './support.js';
import { repositoryDir } from '../../src/git/repository-dir.js';

const post = (body?: unknown) => ({ method: 'POST', body: body === undefined ? undefined : JSON.stringify(body) });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Asynchronous on purpose: the server answering git's HTTP requests runs in this process. */
function git(cwd: string, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.org', '-c', 'credential.helper=', '-c', 'init.defaultBranch=main', ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`git ${args[0]} failed (${code}): ${err}`))));
  });
}

/** The manifest computed from the working tree: every file's own hash, except pointers, which stand for `content`. */
function expectedManifest(dir: string, content: Map<string, Buffer>): Array<{ path: string; size: number; sha256: string }> {
  const out: Array<{ path: string; size: number; sha256: string }> = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === '.git') continue;
      if (e.isDirectory()) walk(p);
      else {
        const bytes = content.get(p) ?? readFileSync(path.join(dir, p));
        out.push({ path: p, size: bytes.length, sha256: sha(bytes) });
      }
    }
  };
  walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : 1));
}

const annexLink = (content: Buffer) => {
  const key = `SHA256E-s${content.length}--${sha(content)}.bin`;
  return `../.git/annex/objects/Qm/Xz/${key}/${key}`;
};

describe('versions from a commit of the hosted repository', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let id: string;
  let repo: string;
  let first: string;
  const annexed = randomBytes(70_000);
  const lfs = randomBytes(50_000);
  const missing = randomBytes(1000);
  const remote = () => {
    const u = new URL(`${server.url}/git/${id}.git`);
    u.username = 'nds';
    u.password = owner.key;
    return u.toString();
  };
  const upload = async (content: Buffer) => {
    const { files } = await json(await owner.api(`/datasets/${id}/upload-urls`, post({ files: [{ path: 'x', size: content.length, sha256: sha(content) }] })), 200);
    if (files[0].status === 'present') return;
    const res = await fetch(files[0].url, { method: 'PUT', headers: files[0].headers, body: new Uint8Array(content) });
    assert.ok(res.ok, `${res.status} ${await res.text()}`);
  };
  const remoteTags = async () => (await git(repo, 'ls-remote', '--tags', remote())).split('\n').filter(Boolean).map((l) => l.split('\t').reverse().join(' '));

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    stranger = await createUploader(server);
    id = (await json(await owner.api('/datasets', post({ name: 'from git' })), 201)).id;
    repo = mkdtempSync(path.join(os.tmpdir(), 'nds-version-repo-'));
    mkdirSync(path.join(repo, 'sourcedata'));
    mkdirSync(path.join(repo, 'derivatives'));
    mkdirSync(path.join(repo, 'code'));
    mkdirSync(path.join(repo, 'copy'));
    writeFileSync(path.join(repo, 'README.md'), '# A dataset\n');
    writeFileSync(path.join(repo, 'copy/README.md'), '# A dataset\n');
    writeFileSync(path.join(repo, 'dataset_description.json'), '{"Name": "from git", "BIDSVersion": "1.9.0"}\n');
    writeFileSync(path.join(repo, 'participants.tsv'), 'participant_id\nsub-01\n');
    writeFileSync(path.join(repo, 'empty.txt'), '');
    // Larger than a pipe's buffer, so the blob crosses many chunks of git's output.
    writeFileSync(path.join(repo, 'sourcedata/plain.bin'), randomBytes(3_000_000));
    writeFileSync(path.join(repo, 'code/run.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(path.join(repo, 'code/run.sh'), 0o755);
    symlinkSync(annexLink(annexed), path.join(repo, 'sourcedata/annexed.bin'));
    writeFileSync(path.join(repo, 'derivatives/lfs.bin'), `version https://git-lfs.github.com/spec/v1\noid sha256:${sha(lfs)}\nsize ${lfs.length}\n`);
    await git(repo, 'init', '-q');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'first');
    first = await git(repo, 'rev-parse', 'HEAD');
    await upload(annexed);
    await upload(lfs);
    await git(repo, 'push', '-q', remote(), 'main');
  });
  after(async () => {
    await server?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('computes the manifest from the tree, records the commit and tags it', async () => {
    const v = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', commit: 'main' })), 201);
    assert.equal(v.source_commit, first);
    const content = new Map([
      ['sourcedata/annexed.bin', annexed],
      ['derivatives/lfs.bin', lfs],
    ]);
    const expected = expectedManifest(repo, content);
    assert.equal(expected.length, 9);
    const m = await json(await owner.api(`/datasets/${id}/manifest?version=1.0.0`), 200);
    assert.deepEqual(m.files, expected);
    assert.equal(v.file_count, 9);
    assert.equal(v.size_bytes, expected.reduce((s, e) => s + e.size, 0));
    assert.deepEqual(await remoteTags(), [`refs/tags/v1.0.0 ${first}`]);
    const d = await json(await owner.api(`/datasets/${id}`), 200);
    assert.equal(d.latest_version, '1.0.0');
  });

  it('copies plain blobs into the object store, so every manifest entry downloads with the right hash', async () => {
    const { files } = await json(await owner.api(`/datasets/${id}/manifest`), 200);
    const down = await json(await owner.api(`/datasets/${id}/download-credentials`, post()), 200);
    for (const f of files as Array<{ path: string; size: number; sha256: string }>) {
      const res = await fetch(`${down.endpoint}${id}/objects/${f.sha256}`, { headers: { authorization: `Bearer ${down.token}` } });
      assert.equal(res.status, 200, f.path);
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.equal(bytes.length, f.size, f.path);
      assert.equal(sha(bytes), f.sha256, f.path);
    }
  });

  it('refuses a repeated version, from the same commit or another', async () => {
    const again = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', commit: first })), 409);
    assert.equal(again.error, 'version_exists');
  });

  it('refuses a commit whose annex content is not stored (409 content_missing), and tags nothing', async () => {
    symlinkSync(annexLink(missing), path.join(repo, 'sourcedata/missing.bin'));
    writeFileSync(path.join(repo, 'notes.txt'), 'second commit\n');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'second');
    const second = await git(repo, 'rev-parse', 'HEAD');
    await git(repo, 'push', '-q', remote(), 'main');
    const refused = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.1.0', commit: second })), 409);
    assert.equal(refused.error, 'content_missing');
    assert.deepEqual(refused.missing, ['sourcedata/missing.bin']);
    assert.deepEqual(await remoteTags(), [`refs/tags/v1.0.0 ${first}`]);
    const { versions } = await json(await owner.api(`/datasets/${id}/versions`), 200);
    assert.deepEqual(versions.map((x: { version: string }) => x.version), ['1.0.0']);

    // A tag of the version's name on another commit refuses the version; once the content is there, 1.1.0 is made.
    await upload(missing);
    await git(repo, 'tag', 'v2.0.0', first);
    await git(repo, 'push', '-q', remote(), 'v2.0.0');
    const tagged = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '2.0.0', commit: second })), 409);
    assert.equal(tagged.error, 'version_exists');
    assert.match(tagged.message, /v2\.0\.0/);
    const made = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.1.0', commit: 'main' })), 201);
    assert.equal(made.source_commit, second);
    assert.equal(made.file_count, 11);
    assert.deepEqual((await remoteTags()).sort(), [`refs/tags/v1.0.0 ${first}`, `refs/tags/v1.1.0 ${second}`, `refs/tags/v2.0.0 ${first}`]);
  });

  it('answers clearly for an unknown commit, a dataset without repository, a bad body and a stranger', async () => {
    const unknown = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '3.0.0', commit: 'a'.repeat(40) })), 404);
    assert.match(unknown.message, /no commit a{40}/);
    const bare = (await json(await owner.api('/datasets', post({ name: 'no repo' })), 201)).id;
    const noRepo = await json(await owner.api(`/datasets/${bare}/versions`, post({ version: '1.0.0', commit: 'main' })), 409);
    assert.match(noRepo.message, /no hosted repository/);
    assert.equal((await json(await owner.api(`/datasets/${id}/versions`, post({ version: '3.0.0', commit: 'main', manifest: [] })), 400)).error, 'validation_failed');
    assert.equal((await json(await owner.api(`/datasets/${id}/versions`, post({ version: '3.0.0' })), 400)).error, 'validation_failed');
    assert.equal((await json(await owner.api(`/datasets/${id}/versions`, post({ version: '3.0.0', commit: 'HEAD~1' })), 400)).error, 'validation_failed');
    assert.equal((await json(await stranger.api(`/datasets/${id}/versions`, post({ version: '3.0.0', commit: 'main' })), 404)).error, 'dataset_not_found');
  });

  it('is what `nds datasets tag` does from the command line', async () => {
    const head = await git(repo, 'rev-parse', 'HEAD');
    const run = startNds(['datasets', 'tag', id, '1.2.0', '--commit', head, '--json'], { NDS_API_URL: server.url, NDS_API_KEY: owner.key });
    const { code, stdout, stderr } = await run.done;
    assert.equal(code, 0, stderr);
    const made = JSON.parse(stdout) as { version: string; source_commit: string };
    assert.deepEqual([made.version, made.source_commit], ['1.2.0', head]);
    const again = await startNds(['datasets', 'tag', id, '1.2.0'], { NDS_API_URL: server.url, NDS_API_KEY: owner.key }).done;
    assert.equal(again.code, 1);
    assert.match(again.stderr, /version_exists/);
  });
});

describe('a version from a commit takes no file larger than MAX_GIT_FILE_BYTES from git itself', () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  let repo: string;
  const LIMIT = 1024 * 1024;
  // Zeros: git packs them a thousand to one, and the store would keep them whole.
  const zeros = Buffer.alloc(LIMIT + 1);
  const atLimit = Buffer.alloc(LIMIT, 7);
  const remote = () => {
    const u = new URL(`${server.url}/git/${id}.git`);
    u.username = 'nds';
    u.password = owner.key;
    return u.toString();
  };
  const tags = async () => (await git(repo, 'ls-remote', '--tags', remote())).split('\n').filter(Boolean);

  before(async () => {
    server = await startTestServer({ env: { MAX_GIT_FILE_BYTES: String(LIMIT) } });
    owner = await createUploader(server);
    id = (await json(await owner.api('/datasets', post({ name: 'big blobs' })), 201)).id;
    repo = mkdtempSync(path.join(os.tmpdir(), 'nds-version-big-'));
    writeFileSync(path.join(repo, 'dataset_description.json'), '{"Name": "big blobs", "BIDSVersion": "1.9.0"}\n');
    writeFileSync(path.join(repo, 'at-limit.bin'), atLimit);
    // A pointer to content far larger than the limit is fine: its content comes by upload.
    writeFileSync(path.join(repo, 'large.edf'), `version https://git-lfs.github.com/spec/v1\noid sha256:${sha(zeros)}\nsize ${zeros.length}\n`);
    await git(repo, 'init', '-q');
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'within the limit');
    await git(repo, 'push', '-q', remote(), 'main');
  });
  after(async () => {
    await server?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('refuses a commit with a larger plain file (400, naming it and both sizes), stores nothing of it and tags nothing', async () => {
    writeFileSync(path.join(repo, 'sub-01_eeg.edf'), zeros);
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'one file past the limit');
    // A push refuses such a file (decision 0054): written into the repository's folder, as one pushed to before may hold it.
    await git(repo, 'push', '-q', repositoryDir(server.config.gitDir, id), 'main');
    const refused = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', commit: 'main' })), 400);
    assert.equal(refused.error, 'validation_failed');
    assert.match(refused.message, /git-lfs or git-annex pointers/);
    assert.deepEqual(refused.details, ['sub-01_eeg.edf: 1,048,577 bytes in git, more than 1,048,576 (1 MiB)']);
    assert.equal(await server.deps.objects.head(`${id}/objects/${sha(zeros)}`), undefined);
    assert.equal(await server.deps.objects.head(`${id}/objects/${sha(atLimit)}`), undefined, 'nothing of the commit was copied');
    assert.deepEqual(await tags(), []);
    const { versions } = await json(await owner.api(`/datasets/${id}/versions`), 200);
    assert.deepEqual(versions, []);
  });

  it('takes a file of exactly the limit, and pointers to larger content', async () => {
    await git(repo, 'rm', '-q', 'sub-01_eeg.edf');
    await git(repo, 'commit', '-q', '-m', 'back within the limit');
    await git(repo, 'push', '-q', remote(), 'main');
    // The pointer's content must be in the store for the version to be made.
    const { files } = await json(await owner.api(`/datasets/${id}/upload-urls`, post({ files: [{ path: 'large.edf', size: zeros.length, sha256: sha(zeros) }] })), 200);
    assert.equal(files[0].status, 'upload');
    assert.ok((await fetch(files[0].url, { method: 'PUT', headers: files[0].headers, body: new Uint8Array(zeros) })).ok);
    const made = await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', commit: 'main' })), 201);
    assert.equal(made.file_count, 3);
    assert.ok(await server.deps.objects.head(`${id}/objects/${sha(atLimit)}`));
  });
});
