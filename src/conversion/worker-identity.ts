/**
 * Who runs a conversion job: a worker id names the host, the process (pid and start time) and the worker,
 * so a worker that starts can tell a running job whose owner is certainly gone (a process of this host that
 * no longer lives, such as its own killed predecessor) from one it cannot judge (another host: the lease
 * decides, `job-queue.ts`).
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { sha256Hex } from '../core/secrets.js';

export interface ProcessIdentity {
  /** The host name and a token of this boot and pid namespace (pids mean nothing across either). */
  host: string;
  pid: number;
  /** When the process started, in ms since the epoch: a pid used again by a later process has another. */
  startedAt: number;
}

/** This process. On Linux the host token covers the boot and the pid namespace (containers sharing a name). */
export function thisProcess(): ProcessIdentity {
  const parts = [hostname()];
  for (const read of [() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(), () => readlinkSync('/proc/self/ns/pid')]) {
    try {
      parts.push(read());
    } catch {
      // Not Linux: the host name alone.
    }
  }
  return { host: `${hostname().replace(/:/g, '_')}/${sha256Hex(parts.join('\n')).slice(0, 12)}`, pid: process.pid, startedAt: Math.round(performance.timeOrigin) };
}

/** `host:pid:startedAt:worker` (the worker part tells several workers of one process apart). */
export function workerIdOf(owner: ProcessIdentity, worker: string): string {
  return `${owner.host}:${owner.pid}:${owner.startedAt}:${worker}`;
}

export function parseWorkerId(id: string): ProcessIdentity | undefined {
  const m = /^(.+):(\d+):(\d+):[^:]*$/.exec(id);
  return m ? { host: m[1]!, pid: Number(m[2]), startedAt: Number(m[3]) } : undefined;
}

/**
 * True when the worker `ownerId` certainly no longer runs: it was a process of this host whose pid is not
 * alive, or whose pid this process now has. False when it may live (this process, a live pid, another host,
 * an id of another form): then only its heartbeat tells.
 */
export function ownerIsGone(ownerId: string | null, self: ProcessIdentity, isAlive: (pid: number) => boolean): boolean {
  const owner = ownerId === null ? undefined : parseWorkerId(ownerId);
  if (!owner || owner.host !== self.host) return false;
  if (owner.pid === self.pid) return owner.startedAt !== self.startedAt;
  return !isAlive(owner.pid);
}

/** Whether a process of this host lives (signal 0 checks without sending; EPERM: it lives, as another user). */
export function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
