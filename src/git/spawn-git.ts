/**
 * The one way the server starts `git`: with a fixed environment, whatever the machine's git configuration
 * holds. No system or user configuration is read (Debian's git-lfs writes `filter.lfs.required=true` into
 * `/etc/gitconfig`, which breaks `git archive` of a tree with pointers), no variable of the server's own
 * environment reaches git (a `GIT_DIR`, `GIT_CONFIG_PARAMETERS` or proxy set for something else), no hook of a
 * repository runs (only the server's own, where a caller names their folder), no credential helper answers,
 * and git may use no transport but those a caller names.
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
  /** The folder of the server's own hooks this run runs (a push's checks); none when left out. */
  hooksDir?: string;
  /** Limits of the run and of every process it starts; none when left out. */
  limits?: ProcessLimits;
}

/** Resource limits (setrlimit, set by util-linux's `prlimit`), which each process a run starts inherits. */
export interface ProcessLimits {
  /**
   * The most memory each process may allocate (RLIMIT_DATA: its heap and private writable maps, not the files
   * it maps): an allocation past it fails, and git stops ("fatal: Out of memory, malloc failed").
   */
  dataBytes: number;
  /** The most CPU time each process may take, in seconds (RLIMIT_CPU): the kernel ends a process past it. */
  cpuSeconds: number;
}

/** Settings every run gets: no hooks (but the server's own, `hooksDir`), no file-system monitor, no credential helper. */
const FIXED_CONFIG: Readonly<Record<string, string>> = {
  'core.hooksPath': '/dev/null',
  'core.fsmonitor': 'false',
  'credential.helper': '',
};

/**
 * The environment of a git run. Only what is listed here reaches git: the caller's `env` cannot override
 * these variables (a `GIT_CONFIG_*` or `GIT_ALLOW_PROTOCOL` of its own is replaced).
 */
export function gitEnvironment(options: Omit<GitSpawnOptions, 'cwd' | 'limits'> = {}): Record<string, string> {
  const hooks = options.hooksDir === undefined ? {} : { 'core.hooksPath': options.hooksDir };
  const config = Object.entries({ ...options.config, ...FIXED_CONFIG, ...hooks });
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

/**
 * Starts `git <args>` in the fixed environment (no shell), its three streams piped. With `limits`, `prlimit`
 * sets them and then becomes git (the child's pid is git's); `--core=0`: a process ended for its CPU time
 * leaves no core file in the repository.
 */
export function spawnGit(args: readonly string[], options: GitSpawnOptions = {}): ChildProcessWithoutNullStreams {
  const { limits } = options;
  const [command, commandArgs] = limits ? ['prlimit', [`--data=${limits.dataBytes}`, `--cpu=${limits.cpuSeconds}`, '--core=0', '--', 'git', ...args]] : ['git', args];
  return spawn(command, commandArgs, { cwd: options.cwd, env: gitEnvironment(options), stdio: ['pipe', 'pipe', 'pipe'] });
}
