/** The system `git`, run without a shell: real git, real speed. Failures carry git's own message. */
import { StringDecoder } from 'node:string_decoder';
import { spawnGit, type GitSpawnOptions } from './spawn-git.js';

export class GitError extends Error {
  readonly exitCode: number | null;
  constructor(args: string[], exitCode: number | null, stderr: string) {
    super(`git ${args[0]} failed (${exitCode}): ${stderr.trim().split('\n').slice(-3).join(' ')}`);
    this.name = 'GitError';
    this.exitCode = exitCode;
  }
}

export interface GitResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export interface RunGitOptions extends Pick<GitSpawnOptions, 'cwd' | 'env' | 'config' | 'protocols' | 'limits'> {
  input?: Buffer;
  /** Kills git when aborted (its result then tells a non-zero exit). */
  signal?: AbortSignal;
}

/** Runs git in the fixed environment of `spawnGit` and collects its output. */
export function runGit(args: string[], options: RunGitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, { cwd: options.cwd, env: options.env, config: options.config, protocols: options.protocols, limits: options.limits });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    const kill = () => child.kill();
    options.signal?.addEventListener('abort', kill, { once: true });
    child.on('close', (code) => {
      options.signal?.removeEventListener('abort', kill);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  });
}

/**
 * Git listed more records than its reader takes: a tree or diff past `MAX_TREE_FILES` (a pack of a few kilobytes
 * can hold a tree of millions of paths, trees naming the same subtree over and over).
 */
export class GitOutputTooLargeError extends Error {
  readonly limit: number;
  constructor(args: string[], limit: number) {
    super(`git ${args.filter((a) => !a.startsWith('-') && !a.startsWith('/')).slice(0, 1).join('')} listed more than ${limit} entries`);
    this.name = 'GitOutputTooLargeError';
    this.limit = limit;
  }
}

export interface GitRecordOptions extends RunGitOptions {
  /** What ends each record of the output: `\0` with git's `-z`, else a newline. */
  separator: '\0' | '\n';
  /** The most records read: one more stops git and throws `GitOutputTooLargeError`. */
  limit: number;
}

/**
 * Runs git and hands each record of its output to `each` as it comes, holding one chunk and one record, never
 * the whole output (a tree of a hostile repository may list millions of paths). `each` returning `false` stops
 * git there, without an error. Throws `GitError` on a non-zero exit of a run not stopped.
 */
export async function eachGitRecord(args: string[], options: GitRecordOptions, each: (record: string) => boolean | void): Promise<void> {
  const child = spawnGit(args, { cwd: options.cwd, env: options.env, config: options.config, protocols: options.protocols, limits: options.limits });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    if (stderr.length < 65536) stderr += d;
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  child.stdin.on('error', () => {});
  child.stdin.end(options.input);
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let count = 0;
  let stopped = false;
  try {
    read: for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      rest += decoder.write(chunk);
      let end: number;
      let from = 0;
      while ((end = rest.indexOf(options.separator, from)) >= 0) {
        const record = rest.slice(from, end);
        from = end + 1;
        if (++count > options.limit) throw new GitOutputTooLargeError(args, options.limit);
        if (each(record) === false) {
          stopped = true;
          break read;
        }
      }
      rest = rest.slice(from);
    }
  } catch (err) {
    child.kill();
    await exited.catch(() => undefined);
    throw err;
  }
  if (stopped) child.kill();
  const code = await exited;
  if (!stopped && code !== 0) throw new GitError(args, code, stderr);
  const last = rest + decoder.end();
  if (!stopped && last !== '') {
    if (++count > options.limit) throw new GitOutputTooLargeError(args, options.limit);
    each(last);
  }
}

/** Runs git and returns its trimmed stdout; throws `GitError` on a non-zero exit. */
export async function git(args: string[], options: RunGitOptions = {}): Promise<string> {
  const r = await runGit(args, options);
  if (r.code !== 0) throw new GitError(args, r.code, r.stderr);
  return r.stdout.toString('utf8').trim();
}

/** True when commit `a` is an ancestor of (or equal to) `b` in the repository at `repoDir`; undefined when unknown. */
export async function isAncestor(repoDir: string, a: string, b: string): Promise<boolean | undefined> {
  const r = await runGit(['--git-dir', repoDir, 'merge-base', '--is-ancestor', a, b]);
  if (r.code === 0) return true;
  if (r.code === 1) return false;
  return undefined;
}
