/** The system `git`, run without a shell: real git, real speed. Failures carry git's own message. */
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

export interface RunGitOptions extends Pick<GitSpawnOptions, 'cwd' | 'env' | 'config' | 'protocols'> {
  input?: Buffer;
}

/** Runs git in the fixed environment of `spawnGit` and collects its output. */
export function runGit(args: string[], options: RunGitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(args, { cwd: options.cwd, env: options.env, config: options.config, protocols: options.protocols });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr: err }));
    child.stdin.on('error', () => {});
    child.stdin.end(options.input);
  });
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
