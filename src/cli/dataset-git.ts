/**
 * The git half of `nds datasets upload` (docs/datasets.md): the uploaded folder becomes one commit on the
 * dataset's hosted repository, data files as git-lfs pointers to the content already in the object store,
 * small text files (JSON, TSV, README, BrainVision headers) as plain blobs. The commit is built with git's
 * plumbing in a throw-away bare repository (no checkout, no copy of the data), on top of the remote `main`,
 * and pushed there. The API key travels in an `Authorization` header set through git's environment, never on
 * a command line or in a file.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CliError } from './cli-error.js';

export interface CommitFile {
  path: string;
  abs: string;
  size: number;
  sha256: string;
}

export interface PushedCommit {
  commit: string;
  /** false when the folder matched the remote `main` already, so nothing was pushed. */
  changed: boolean;
  pointers: number;
  blobs: number;
}

/** Files kept as plain git blobs: small text that people read and diff. Everything else is a pointer. */
const TEXT_EXTENSIONS = new Set(['.json', '.tsv', '.csv', '.txt', '.md', '.rst', '.yml', '.yaml', '.vhdr', '.vmrk', '.bidsignore', '.gitattributes', '.cff']);
const TEXT_NAMES = new Set(['README', 'CHANGES', 'LICENSE', 'LICENCE', 'CITATION']);
const BLOB_MAX_BYTES = 1 << 20;

export function isPlainBlob(file: { path: string; size: number }): boolean {
  if (file.size > BLOB_MAX_BYTES) return false;
  const name = path.posix.basename(file.path);
  return TEXT_EXTENSIONS.has(path.posix.extname(name).toLowerCase()) || TEXT_NAMES.has(name.replace(/\.[^.]*$/, '').toUpperCase());
}

export function lfsPointer(file: { size: number; sha256: string }): string {
  return `version https://git-lfs.github.com/spec/v1\noid sha256:${file.sha256}\nsize ${file.size}\n`;
}

interface GitRun {
  env: NodeJS.ProcessEnv;
}

function runGit(run: GitRun, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { env: run.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('error', (e) => reject(new CliError(`git could not be started (${e.message}); install git or pass --no-git`)));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new CliError(`git ${args[0]} failed: ${err.trim().split('\n').slice(-3).join(' ') || `exit ${code}`}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input ?? '');
  });
}

export async function commitAndPush(options: {
  gitUrl: string;
  apiKey: string;
  files: CommitFile[];
  message: string;
  author: { name: string; email: string };
  /** false for a dataset without a hosted repository yet: the push creates it. */
  remoteExists: boolean;
}): Promise<PushedCommit> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'nds-upload-git-'));
  const run: GitRun = {
    env: {
      ...process.env,
      GIT_DIR: dir,
      GIT_INDEX_FILE: path.join(dir, 'nds-index'),
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Bearer ${options.apiKey}`,
      GIT_AUTHOR_NAME: options.author.name,
      GIT_AUTHOR_EMAIL: options.author.email,
      GIT_COMMITTER_NAME: options.author.name,
      GIT_COMMITTER_EMAIL: options.author.email,
    },
  };
  try {
    await runGit(run, ['init', '--quiet', '--bare', dir]);
    const remote = options.remoteExists ? (await runGit(run, ['ls-remote', options.gitUrl, 'refs/heads/main'])).split(/\s/)[0] || undefined : undefined;
    if (remote) await runGit(run, ['fetch', '--quiet', '--depth=1', options.gitUrl, remote]);

    // Pointer files are written to the scratch folder so one `hash-object --stdin-paths` stores every blob.
    const pointerDir = path.join(dir, 'nds-pointers');
    const sources: string[] = [];
    let pointers = 0;
    for (const [i, f] of options.files.entries()) {
      if (isPlainBlob(f)) {
        sources.push(f.abs);
      } else {
        if (pointers === 0) await mkdir(pointerDir);
        const file = path.join(pointerDir, String(i));
        await writeFile(file, lfsPointer(f));
        sources.push(file);
        pointers++;
      }
    }
    const oids = (await runGit(run, ['hash-object', '-w', '--no-filters', '--stdin-paths'], sources.join('\n') + '\n')).trim().split('\n');
    if (oids.length !== options.files.length) throw new CliError('git hash-object answered an unexpected number of objects');
    const indexInfo = options.files.map((f, i) => `100644 ${oids[i]}\t${f.path}`).join('\n') + '\n';
    await runGit(run, ['update-index', '--add', '--index-info'], indexInfo);
    const tree = (await runGit(run, ['write-tree'])).trim();
    const blobs = options.files.length - pointers;

    if (remote && (await runGit(run, ['rev-parse', `${remote}^{tree}`])).trim() === tree) {
      return { commit: remote, changed: false, pointers, blobs };
    }
    const commit = (await runGit(run, ['commit-tree', tree, ...(remote ? ['-p', remote] : []), '-m', options.message])).trim();
    await runGit(run, ['push', '--quiet', options.gitUrl, `${commit}:refs/heads/main`]);
    return { commit, changed: true, pointers, blobs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
