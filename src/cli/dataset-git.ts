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

/** A path as a `.gitattributes` pattern that matches it alone (glob characters and spaces escaped, anchored). */
function exactPattern(file: string): string {
  return `/${file.replace(/[\\*?[\]!#]/g, (ch) => `\\${ch}`).replace(/\s/g, '[[:space:]]')}`;
}

/**
 * The `.gitattributes` of a commit whose data files are pointers: git-lfs's filter for them, so that a clone
 * with git-lfs smudges them (`git lfs pull`) and its work tree stays clean. An extension whose files are all
 * pointers gets one `*.ext` line (new files of that kind are stored by git-lfs too); other pointers, one line each.
 */
export function lfsAttributes(files: Array<{ path: string; size: number }>): string {
  const LFS = 'filter=lfs diff=lfs merge=lfs -text';
  const byExtension = new Map<string, { pointers: string[]; blobs: number }>();
  const single: string[] = [];
  for (const f of files) {
    const ext = path.posix.extname(path.posix.basename(f.path));
    if (!ext || /[^A-Za-z0-9_.-]/.test(ext)) {
      if (!isPlainBlob(f)) single.push(f.path);
      continue;
    }
    const entry = byExtension.get(ext) ?? { pointers: [], blobs: 0 };
    if (isPlainBlob(f)) entry.blobs++;
    else entry.pointers.push(f.path);
    byExtension.set(ext, entry);
  }
  const lines: string[] = [];
  for (const [ext, entry] of [...byExtension].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (entry.pointers.length === 0) continue;
    if (entry.blobs === 0) lines.push(`*${ext} ${LFS}`);
    else single.push(...entry.pointers);
  }
  for (const file of single.sort()) lines.push(`${exactPattern(file)} ${LFS}`);
  return lines.length === 0 ? '' : `# Data files are git-lfs pointers to the dataset's content (written by nds datasets upload).\n${lines.join('\n')}\n`;
}

/**
 * The dataset's `git_url` as the server answered it, once it is an http(s) URL of the API's own origin. git
 * would take any other text as an option (`--upload-pack=<command>` runs a command) or a transport of its own
 * (`ext::`, `file://`), and the API key travels to that URL in a header.
 */
export function checkedGitUrl(gitUrl: unknown, apiBaseUrl: string): string {
  let url: URL | undefined;
  try {
    url = typeof gitUrl === 'string' ? new URL(gitUrl) : undefined;
  } catch {
    url = undefined;
  }
  const origin = new URL(apiBaseUrl).origin;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin || url.username || url.password) {
    throw new CliError(`the server answered a git_url that is not an http(s) URL of ${origin}; nothing was pushed (use --no-git to upload without git)`);
  }
  return url.href;
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
      // Only the smart-http transports: no `ext::` command, no local path, whatever the URL says.
      GIT_ALLOW_PROTOCOL: 'http:https',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Bearer ${options.apiKey}`,
      // git follows a redirect of its first request and sends the later ones, with this header, to the new host.
      GIT_CONFIG_KEY_1: 'http.followRedirects',
      GIT_CONFIG_VALUE_1: 'false',
      GIT_AUTHOR_NAME: options.author.name,
      GIT_AUTHOR_EMAIL: options.author.email,
      GIT_COMMITTER_NAME: options.author.name,
      GIT_COMMITTER_EMAIL: options.author.email,
    },
  };
  try {
    await runGit(run, ['init', '--quiet', '--bare', dir]);
    const remote = options.remoteExists ? (await runGit(run, ['ls-remote', '--end-of-options', options.gitUrl, 'refs/heads/main'])).split(/\s/)[0] || undefined : undefined;
    if (remote && !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(remote)) throw new CliError('git ls-remote answered something that is not an object id for main');
    if (remote) await runGit(run, ['fetch', '--quiet', '--depth=1', '--end-of-options', options.gitUrl, remote]);

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
    // A folder with its own `.gitattributes` keeps it as it is; otherwise the pointers get git-lfs's filter.
    const committed: Array<{ path: string }> = [...options.files];
    const attributes = options.files.some((f) => f.path === '.gitattributes') ? '' : lfsAttributes(options.files);
    if (attributes) {
      const file = path.join(dir, 'nds-gitattributes');
      await writeFile(file, attributes);
      sources.push(file);
      committed.push({ path: '.gitattributes' });
    }
    const oids = (await runGit(run, ['hash-object', '-w', '--no-filters', '--stdin-paths'], sources.join('\n') + '\n')).trim().split('\n');
    if (oids.length !== committed.length) throw new CliError('git hash-object answered an unexpected number of objects');
    const indexInfo = committed.map((f, i) => `100644 ${oids[i]}\t${f.path}`).join('\n') + '\n';
    await runGit(run, ['update-index', '--add', '--index-info'], indexInfo);
    const tree = (await runGit(run, ['write-tree'])).trim();
    const blobs = committed.length - pointers;

    if (remote && (await runGit(run, ['rev-parse', `${remote}^{tree}`])).trim() === tree) {
      return { commit: remote, changed: false, pointers, blobs };
    }
    const commit = (await runGit(run, ['commit-tree', tree, ...(remote ? ['-p', remote] : []), '-m', options.message])).trim();
    await runGit(run, ['push', '--quiet', '--end-of-options', options.gitUrl, `${commit}:refs/heads/main`]);
    return { commit, changed: true, pointers, blobs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
