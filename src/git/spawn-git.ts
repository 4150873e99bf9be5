/**
 * The one way the server starts `git`: with a fixed environment, whatever the machine's git configuration
 * holds. No system or user configuration is read (Debian's git-lfs writes `filter.lfs.required=true` into
 * `/etc/gitconfig`, which breaks `git archive` of a tree with pointers), no variable of the server's own
 * environment reaches git (a `GIT_DIR`, `GIT_CONFIG_PARAMETERS` or proxy set for something else), no hook
 * runs, no credential helper answers, and git may use no transport but those a caller names.
 * The CLI's own git (`cli/dataset-git.ts`) runs on the user's machine with the user's configuration instead.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { executableSearchPath } from '../core/config.js';

/**
 * Transports a run of git may use: `file` to read a repository of this server, `https` to fetch from outside,
 * `http` to fetch from another node of the service (at its NODE_URL, decision 0026).
 */
export type GitProtocol = 'file' | 'http' | 'https';

export interface GitSpawnOptions {
  cwd?: string;
  /** Variables of the run besides git's own (the CGI variables of `git http-backend`). */
  env?: Readonly<Record<string, string>>;
  /** Settings for this run only (as `git -c`), e.g. `http.curloptResolve`. */
  config?: Readonly<Record<string, string>>;
  /** Transports allowed; none when left out (a run that needs none cannot be talked into one). */
  protocols?: readonly GitProtocol[];
}

/** Settings every run gets: no hooks, no file-system monitor, no credential helper. */
const FIXED_CONFIG: Readonly<Record<string, string>> = {
  'core.hooksPath': '/dev/null',
  'core.fsmonitor': 'false',
  'credential.helper': '',
};

/**
 * The environment of a git run. Only what is listed here reaches git: the caller's `env` cannot override
 * these variables (a `GIT_CONFIG_*` or `GIT_ALLOW_PROTOCOL` of its own is replaced).
 */
export function gitEnvironment(options: Omit<GitSpawnOptions, 'cwd'> = {}): Record<string, string> {
  const config = Object.entries({ ...options.config, ...FIXED_CONFIG });
  const env: Record<string, string> = {
    ...options.env,
    PATH: executableSearchPath(),
    // Debian's home of system users that have none: it never exists, so git finds no ~/.gitconfig there.
    HOME: '/nonexistent',
    LC_ALL: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_PROTOCOL_FROM_USER: '0',
    GIT_ALLOW_PROTOCOL: (options.protocols ?? []).join(':'),
    GIT_CONFIG_COUNT: String(config.length),
  };
  config.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** Starts `git <args>` in the fixed environment (no shell), its three streams piped. */
export function spawnGit(args: readonly string[], options: GitSpawnOptions = {}): ChildProcessWithoutNullStreams {
  return spawn('git', args, { cwd: options.cwd, env: gitEnvironment(options), stdio: ['pipe', 'pipe', 'pipe'] });
}
