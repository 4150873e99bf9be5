/**
 * What the size of a write costs the kernel, with no server involved: 1 GiB into 100 new files by 4 writers
 * (the folder store's I/O threads), in 64 KiB and in 1 MiB `pwrite`s, alternating, each round after a
 * `sync` and a pause. Prints wall time and this process's user and system CPU. On this VM the 1 MiB writes
 * cost several times the system time of the 64 KiB ones (large page-cache folios come from memory the host
 * has taken back); the folder store writes 64 KiB pieces for that reason.
 * Run: node --import tsx bench/upload-write-probe.ts [--dir /tmp] [--rounds 3] [--settle-ms 3000]
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { option } from './bench-args.js';

const root = option('dir', tmpdir());
const rounds = Number(option('rounds', '3'));
const settleMs = Number(option('settle-ms', '3000'));
const files = 100;
const perFile = Math.floor(2 ** 30 / files);

async function writeAll(dir: string, piece: number): Promise<{ seconds: number; user: number; system: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      const buffer = Buffer.alloc(piece, 1);
      while (next < files) {
        const handle = await open(join(dir, String(next++)), 'w');
        for (let at = 0; at < perFile; at += piece) await handle.write(buffer, 0, Math.min(piece, perFile - at), at);
        await handle.close();
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, user: used.user / 1e6, system: used.system / 1e6 };
}

console.log('| round | piece | wall | user | system |\n|---|---|---|---|---|');
for (let round = 1; round <= rounds; round++) {
  for (const piece of [64 * 1024, 1024 * 1024]) {
    execFileSync('sync');
    await new Promise((r) => setTimeout(r, settleMs));
    const dir = await mkdtemp(join(root, 'nds-write-probe-'));
    try {
      const r = await writeAll(dir, piece);
      console.log(`| ${round} | ${piece / 1024} KiB | ${r.seconds.toFixed(2)} s | ${r.user.toFixed(2)} s | ${r.system.toFixed(2)} s |`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
