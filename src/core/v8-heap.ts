/**
 * V8 heap settings of a process that receives large request bodies (`nds serve`), set once as it starts
 * (decision 0033). Node's HTTP parser copies every socket read of a body into a fresh 64 KiB buffer; V8 counts
 * those as external memory and, by default, starts a full mark-compact of the whole heap whenever they add up
 * to a few dozen megabytes, however few of them are still alive: during an upload, a collection every 200 ms
 * on a heap of 50 MB, up to half of the server's CPU. Counted in the heap's global limit instead, they wait
 * for the collections the heap itself asks for: a quarter as many.
 */
import { setFlagsFromString } from 'node:v8';

const FLAG = '--external-memory-accounted-in-global-limit';

/** Whether a V8 of this version has the flag: 13.6 (Node 24) has it, 12.4 (Node 22) prints an error for it. */
export function hasExternalMemoryLimitFlag(v8Version: string): boolean {
  const [major = 0, minor = 0] = v8Version.split('.').map(Number);
  return major > 13 || (major === 13 && minor >= 6);
}

let applied = false;

/** Counts external memory (request bodies) in V8's global heap limit, where this V8 can; true once set. */
export function countExternalMemoryInHeapLimit(v8Version = process.versions.v8): boolean {
  if (!applied && hasExternalMemoryLimitFlag(v8Version)) {
    setFlagsFromString(FLAG);
    applied = true;
  }
  return applied;
}
