/**
 * How fast the machine takes new files, with no converter involved: writes `--gib` GiB of fresh 512 KiB files
 * (a level-0 chunk's size) into a folder and prints the rate and the kernel time of each 512 MiB. On this
 * VM the rate falls eightfold once a few GiB of new memory have been touched (page cache or tmpfs): the
 * conversion benchmark's large cases run into the same wall.
 * Run: node --import tsx bench/conversion-write-probe.ts [--dir /dev/shm] [--gib 6]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { option } from './bench-args.js';

const dir = mkdtempSync(join(option('dir', '/dev/shm'), 'nds-write-probe-'));
const gib = Number(option('gib', '6'));
const file = Buffer.alloc(512 * 1024, 7);
const perStep = 1024;
const rows: string[] = [];
try {
  mkdirSync(dir, { recursive: true });
  let started = performance.now();
  let cpu = process.cpuUsage();
  for (let i = 0; i < gib * 2048; i++) {
    writeFileSync(join(dir, String(i)), file);
    if ((i + 1) % perStep === 0) {
      const now = performance.now();
      const used = process.cpuUsage(cpu);
      rows.push(`| ${((i + 1) / 2048).toFixed(1)} GiB | ${((perStep * file.length) / 1e6 / ((now - started) / 1000)).toFixed(0)} MB/s | ${(used.system / 1e6).toFixed(2)} s |`);
      started = now;
      cpu = process.cpuUsage();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`Fresh 512 KiB files into ${option('dir', '/dev/shm')}, by 512 MiB:\n`);
console.log('| written so far | rate | kernel time |');
console.log('|---|---:|---:|');
for (const row of rows) console.log(row);
