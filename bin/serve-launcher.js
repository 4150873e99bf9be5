// `nds serve` runs in a child process started with settings that glibc and V8 read only when a process starts
// (decision 0015): MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=131072 (glibc keeps two heaps instead of one a
// thread, and gives buffers of 128 KiB and more back to the system when they are freed instead of keeping them in
// its heaps), and --v8-pool-size=1 (one V8 helper thread instead of four, each of which kept memory of its own).
// The launcher only passes signals on and ends as the server ends. NDS_SERVE_LAUNCHER=off runs the server in the
// first process instead (as does a debugger's --inspect); settings the caller gave (the variables, or
// --v8-pool-size in NODE_OPTIONS) are kept.
import { spawn } from 'node:child_process';

/** Set in the server's environment by the launcher (and removed at once there, so nothing the server runs inherits it). */
const CHILD_MARK = 'NDS_SERVE_LAUNCHED';
const ALLOCATOR_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };
const POOL_FLAG = '--v8-pool-size';
/** Signals a service manager or a terminal sends; each is passed to the server, which decides what it means. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];

/**
 * Starts `nds serve` in a child process when this process should be its launcher, and returns true then (the
 * caller must do nothing more). Returns false when this process is to run the command itself: another command,
 * `--help`, NDS_SERVE_LAUNCHER=off, or the server that a launcher started.
 */
export function launchServe(argv = process.argv, env = process.env) {
  if (env[CHILD_MARK] === '1') {
    delete env[CHILD_MARK];
    // The launcher is gone (killed outright: it passes every other ending on): stop as if told to, so that the
    // port and the data folder are free for the next start instead of held by a server nobody waits for.
    process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
    process.channel?.unref();
    return false;
  }
  const args = argv.slice(2);
  if (args[0] !== 'serve' || args.includes('--help') || args.includes('-h') || env.NDS_SERVE_LAUNCHER === 'off') return false;
  const nodeFlags = [...process.execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  // Under a debugger the server stays in this process: a second one would not get the inspector's port.
  if (nodeFlags.some((a) => a.startsWith('--inspect'))) return false;

  const poolGiven = nodeFlags.some((a) => a.startsWith(POOL_FLAG));
  const child = spawn(process.execPath, [...process.execArgv, ...(poolGiven ? [] : [`${POOL_FLAG}=1`]), ...argv.slice(1)], {
    env: { ...ALLOCATOR_ENV, ...env, [CHILD_MARK]: '1' },
    // The IPC channel carries nothing: the server watches it to learn that the launcher died.
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  const pass = (signal) => child.kill(signal);
  for (const signal of FORWARDED) process.on(signal, pass);
  child.on('error', (err) => {
    process.stderr.write(`nds serve: could not start the server process (${err.message}); NDS_SERVE_LAUNCHER=off runs it in this one\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    for (const s of FORWARDED) process.off(s, pass);
    // End the way the server ended: killed by the same signal, or with its exit code.
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
  return true;
}
