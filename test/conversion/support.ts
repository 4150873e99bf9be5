/** A BIDS dataset in a real git repository, built from the test fixtures, for pipeline tests. */
import { execFileSync, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';

import { repositoryDir } from '../../src/git/repository-dir.js';
import { HOSTED_SOURCE } from '../../src/datasets/source-repo.js';
import { gitFetchCredentialReads } from '../../src/datasets/git-fetch-credential.js';
import { runGitHttpBackend } from '../../src/git/git-http-backend.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import { writeEdf } from '../formats/support/edf-writer.js';
import { fixturesDir } from '../formats/support/fixtures.js';

export const fixtures = fixturesDir;

export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.org', '-c', 'init.defaultBranch=main', ...args], { cwd: dir, encoding: 'utf8' }).trim();
}

/**
 * git with no prompts, asynchronous: a refused credential fails at once instead of waiting for input, and the
 * server under test, which lives in this process, can answer git's requests (a synchronous spawn would block
 * its event loop).
 */
export function gitRun(cwd: string, ...args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.org', '-c', 'credential.helper=', ...args], {
      cwd,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '' },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stderr }));
  });
}

/** A repository with two EMG recordings (one EDF of CustomBipolar, one plain EDF with mixed rates). */
export function makeBidsRepo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-bids-repo-'));
  cpSync(path.join(fixtures, 'bids/emg_CustomBipolar'), dir, { recursive: true });
  const sub2 = path.join(dir, 'sub-02/eeg');
  mkdirSync(sub2, { recursive: true });
  cpSync(path.join(fixtures, 'mne-python/edf/test_uneven_samp.edf'), path.join(sub2, 'sub-02_task-rest_eeg.edf'));
  writeFileSync(path.join(sub2, 'sub-02_task-rest_events.tsv'), 'onset\tduration\ttrial_type\n1.5\t0\tblink\n');
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'first');
  return dir;
}

/**
 * A committed BIDS repository `root/name` of `subjects` EDF recordings (`sub-0N/eeg/sub-0N_task-rest_eeg.edf`),
 * each `seconds` long, of `channels` sines at `rate` Hz that differ by subject and channel.
 */
export function makeEdfRepo(root: string, name: string, recordings: { subjects: number; seconds: number; channels: number; rate: number }): string {
  const { subjects, seconds, channels, rate } = recordings;
  const dir = path.join(root, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'dataset_description.json'), JSON.stringify({ Name: name, BIDSVersion: '1.9.0' }));
  for (let s = 1; s <= subjects; s++) {
    const sub = path.join(dir, `sub-0${s}`, 'eeg');
    mkdirSync(sub, { recursive: true });
    const signals = Array.from({ length: channels }, (_, c) => {
      const samples = new Int16Array(seconds * rate);
      for (let i = 0; i < samples.length; i++) samples[i] = Math.round(2000 * Math.sin((i * (c + s)) / 30));
      return { label: `EEG${c + 1}`, samplesPerRecord: rate, samples };
    });
    writeFileSync(path.join(sub, `sub-0${s}_task-rest_eeg.edf`), writeEdf({ recordDuration: 1, records: seconds, signals }));
  }
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'recordings');
  return dir;
}

/** A 10-second EDF of `channels` sines at 100 Hz whose samples `seed` sets: a recording to change in a repository. */
export function sineEdf(channels: number, seed: number): Uint8Array {
  const signals = Array.from({ length: channels }, (_, c) => {
    const samples = new Int16Array(10 * 100);
    for (let i = 0; i < samples.length; i++) samples[i] = Math.round(1000 * Math.sin((i * (c + seed)) / 17));
    return { label: `EEG${c + 1}`, samplesPerRecord: 100, samples };
  });
  return writeEdf({ recordDuration: 1, records: 10, signals });
}

/**
 * Makes the repository `repo` the hosted repository of dataset `id` (moved into `gitDir`, GIT_DIR_ROOT), as a
 * push would: the dataset's `source_repo` is then `hosted` (`hostedSource`). Returns the repository's new
 * folder, where later commits of the test go.
 */
export function hostRepository(gitDir: string, id: string, repo: string): string {
  const dir = repositoryDir(gitDir, id);
  mkdirSync(path.dirname(dir), { recursive: true });
  renameSync(repo, dir);
  return dir;
}

/** A bare copy of `repo` as the hosted repository of dataset `id` (for several datasets of one source). */
export function hostCopy(gitDir: string, id: string, repo: string): void {
  const dir = repositoryDir(gitDir, id);
  mkdirSync(path.dirname(dir), { recursive: true });
  execFileSync('git', ['clone', '-q', '--bare', repo, dir]);
}

/** The `source_repo` of a dataset whose repository is its hosted one. */
export const hostedSource = HOSTED_SOURCE;

export function signGithub(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function pushPayload(repoFullName: string, after: string, paths: { added?: string[]; modified?: string[]; removed?: string[] }, ref = 'refs/heads/main') {
  return {
    ref,
    after,
    deleted: false,
    repository: { full_name: repoFullName, html_url: `https://github.com/${repoFullName}`, clone_url: `https://github.com/${repoFullName}.git` },
    commits: [{ added: paths.added ?? [], modified: paths.modified ?? [], removed: paths.removed ?? [] }],
  };
}

export interface RepositoryNode {
  /** Its URL, the NODE_URL a checkout fetches hosted repositories from. */
  url: string;
  /** Authorization headers of the requests it was sent, in order. */
  authorizations: Array<string | undefined>;
  close(): Promise<void>;
}

/**
 * A node that serves the hosted repositories under `gitDir` over git smart HTTP to holders of a fetch
 * credential (as `nds serve` does to conversion workers), for tests of the checkout without a whole server.
 */
export async function startRepositoryNode(gitDir: string, signing: { dataDir: string; objectSigningSecret: string | undefined }): Promise<RepositoryNode> {
  const authorizations: Array<string | undefined> = [];
  const server = createHttpServer((req, res) => {
    authorizations.push(req.headers.authorization);
    const url = new URL(req.url ?? '/', 'http://node.test');
    const m = /^\/git\/((?:nd|sb)\d{6})\.git(\/.*)$/.exec(url.pathname);
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    if (!m || !gitFetchCredentialReads(signing, token, m[1]!, new Date())) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="test"' }).end();
      return;
    }
    const body = req.method === 'POST' ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null;
    runGitHttpBackend({ method: req.method!, pathInfo: `/${m[1]}.git${m[2]}`, query: url.search.slice(1), contentType: req.headers['content-type'], contentEncoding: req.headers['content-encoding'], body, projectRoot: gitDir, remoteUser: undefined, remoteAddr: '127.0.0.1' })
      .then((answer) => {
        res.writeHead(answer.status, Object.fromEntries(answer.headers));
        if (answer.body) Readable.fromWeb(answer.body as import('node:stream/web').ReadableStream).pipe(res);
        else res.end();
      })
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An object of the test server's store as text; undefined when there is none. */
export async function readObject(server: { deps: { objects: ObjectStore } }, key: string): Promise<string | undefined> {
  const o = await server.deps.objects.get(key);
  if (!o) return undefined;
  const chunks: Buffer[] = [];
  for await (const c of o.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The URL a test pushes dataset `id`'s hosted repository to, with `key` as git's password. */
export function pushRemote(serverUrl: string, id: string, key: string): string {
  const remote = new URL(`${serverUrl}/git/${id}.git`);
  remote.username = 'nds';
  remote.password = key;
  return remote.toString();
}
