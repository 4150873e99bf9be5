/**
 * A bench's files deleted so that they do not slow the next bench. On an ext4 without a journal (this project's
 * VM) the kernel does not reuse an inode for a minute after it was freed, six while its inode table block is
 * dirty (not yet written out, or written to again), and every file created meanwhile in that block group walks
 * past each such inode (`recently_deleted` in perf): a 40-recording conversion, 4,800 files, paid 3–4 s of
 * system time for it right after a bench had deleted its stores (bench/RESULTS.md, 2026-11-28, sixth session).
 * A file system with a journal does not do this. So a bench deletes with `removeSettled` (the deletion written
 * out, and its time noted), and waits with `waitForSettledDeletions` before it measures anything that creates
 * files.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** When a bench last deleted its files (milliseconds since the epoch), shared by every bench of this machine. */
const STAMP = path.join(tmpdir(), 'nds-bench-deleted-at');
/**
 * The kernel's six minutes for an inode whose table block is dirty, and a margin. A minute is enough for a
 * deletion written out, until the files of the next run dirty the same blocks again: then it is six (in a
 * two-worker run that waited 65 s, the walk still took 7 % of the Node.js main threads' samples).
 */
const SETTLE_MS = 365_000;

/** Removes `paths` (folders whole), writes the deletion out and notes its time. */
export async function removeSettled(...paths: string[]): Promise<void> {
  for (const p of paths) await rm(p, { recursive: true, force: true });
  execFileSync('sync');
  writeFileSync(STAMP, String(Date.now()));
}

/** Waits until the last `removeSettled` of any bench is six minutes old, saying so when it has to wait. */
export async function waitForSettledDeletions(): Promise<void> {
  let deletedAt: number;
  try {
    deletedAt = Number(readFileSync(STAMP, 'utf8'));
  } catch {
    return;
  }
  const wait = deletedAt + SETTLE_MS - Date.now();
  if (!(wait > 0)) return;
  process.stderr.write(`waiting ${Math.ceil(wait / 1000)} s: files a bench deleted a moment ago would slow every file created now (bench/settled-deletions.ts)\n`);
  execFileSync('sync');
  await sleep(wait);
}
