/**
 * The process of a spawned `nds serve` that does the serving, and its figures from /proc (Linux). `nds serve`
 * starts the server in a child of its own (bin/serve-launcher.js): the benches measure that child, and the
 * launcher apart.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The server under a launcher `pid` (its only child), or `pid` itself when it has none (NDS_SERVE_LAUNCHER=off). */
export function servingPid(pid: number): number {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) return Number(name);
    } catch {
      // ended while listed
    }
  }
  return pid;
}

/** Resident set of `pid` in bytes; 0 once it has ended. */
export function rssBytes(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Anonymous (private, not file-backed) resident memory of `pid` in bytes: what it adds beside the processes sharing its executable. */
export function anonymousRssBytes(pid: number): number {
  try {
    return Number(/RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** CPU time of `pid` in seconds (user + system; clock ticks of 1/100 s). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}
