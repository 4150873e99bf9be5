/** Runs the `nds` command as a child process (`node bin/nds.js ...`, the installed entry point), as a person would. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  /** Resolves with the first match of `pattern` in stderr so far or later. */
  stderrMatch(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  done: Promise<CliResult>;
  /** What the process printed so far. */
  output(): { stdout: string; stderr: string };
}

/**
 * Starts `nds <args>` with `env` on top of a clean environment (no NDS_API_KEY leaks in from the caller); the
 * `nds` of the checkout at `root` (another release's worktree, say), run from that folder, when given.
 */
export function startNds(args: string[], env: Record<string, string>, stdin?: string, root?: string): CliRun {
  const base = { ...process.env };
  delete base.NDS_API_KEY;
  delete base.NDS_API_URL;
  const child = spawn(process.execPath, [root ? path.join(root, 'bin/nds.js') : 'bin/nds.js', ...args], {
    cwd: root,
    env: { ...base, NDS_NO_BROWSER: '1', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin!.end(stdin);
  let stdout = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => {
    stderr += d;
    for (const w of waiters.splice(0)) w();
  });
  const done = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return {
    child,
    done,
    output: () => ({ stdout, stderr }),
    stderrMatch(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} in stderr: ${stderr}`)), timeoutMs);
        const look = () => {
          const m = pattern.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          } else waiters.push(look);
        };
        look();
      });
    },
  };
}

export function nds(args: string[], env: Record<string, string>, stdin?: string): Promise<CliResult> {
  return startNds(args, env, stdin).done;
}

/** `nds <args>` against a test server, signed in with `key`; `env` adds to (or overrides) the two. */
export function ndsAs(server: { url: string }, key: string, args: string[], env: Record<string, string> = {}): CliRun {
  return startNds(args, { NDS_API_URL: server.url, NDS_API_KEY: key, ...env });
}
