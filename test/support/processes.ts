/**
 * Processes seen through /proc (Linux): the children of a process, whether one has ended, and its memory and
 * CPU time. `nds serve` runs its server in a child of the process started (bin/serve-launcher.js), so tests and
 * benches find the server among the children of that process.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name (state first, then the parent's pid); undefined once gone. */
function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(statFields(name)?.[1]) === pid)
    .map(Number);
}

/** The process that serves under a started `nds serve` (`pid`'s only child), or `pid` when it has none (NDS_SERVE_LAUNCHER=off). */
export function servingPid(pid: number): number {
  return childrenOf(pid)[0] ?? pid;
}

/** A process that has ended: gone, or a zombie not yet collected by its new parent. */
export function ended(pid: number): boolean {
  const fields = statFields(pid);
  return fields === undefined || fields[0] === 'Z';
}

/** A `kB` line of /proc/<pid>/status in bytes; 0 once the process has ended. */
function statusBytes(pid: number, field: 'VmRSS' | 'RssAnon'): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Resident set of `pid` in bytes. */
export const rssBytes = (pid: number): number => statusBytes(pid, 'VmRSS');

/** Anonymous resident memory of `pid` in bytes: what it adds beside the processes sharing its executable. */
export const anonymousRssBytes = (pid: number): number => statusBytes(pid, 'RssAnon');

/** CPU time of `pid` in seconds (user + system; clock ticks of 1/100 s); 0 once it has ended. */
export function cpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return fields ? (Number(fields[11]) + Number(fields[12])) / 100 : 0;
}
