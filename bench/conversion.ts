/**
 * Conversion benchmark (issue 4): synthetic 64-channel, 1000 Hz recordings (1 GiB EDF, 1 GiB BDF, 4 GiB EDF)
 * converted to nds-zarr stores, each beside a plain `cat file > /dev/null` of the same file, in one run.
 * Each conversion runs in its own process pinned to one core (taskset -c 0), so its peak RSS is its own,
 * and runs twice: once writing the store, once with the store's chunks dropped (the converter alone).
 * Run: node --import tsx bench/conversion.ts [--cases edf:1,bdf:1,edf:4] [--dir /tmp] [--out /dev/shm]
 * `--out` puts the stores elsewhere than the sources: on tmpfs it separates the converter's speed from the
 * disk's. Stores stay until the end of the run: on an ext4 without a journal (this VM's disk), creating
 * files right after deleting thousands is slower (the inode allocator skips recently deleted inodes).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSyntheticRecording } from './conversion-synthetic.js';
import { option } from './bench-args.js';
import { removeSettled, waitForSettledDeletions } from './settled-deletions.js';

const cases = option('cases', 'edf:1,bdf:1,edf:4').split(',').map((c) => {
  const [format, gib] = c.split(':');
  return { bdf: format === 'bdf', gib: Number(gib) };
});
const work = await mkdtemp(join(option('dir', tmpdir()), 'nds-bench-'));
const outDir = await mkdtemp(join(option('out', work), 'nds-bench-out-'));
const runner = fileURLToPath(new URL('./conversion-run.ts', import.meta.url));
const hasTaskset = spawnSync('taskset', ['--version']).status === 0;
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

interface Run {
  seconds: number;
  storeBytes: number;
  maxRssBytes: number;
  userSeconds: number;
  systemSeconds: number;
}

function convert(path: string, out: string): Run {
  const command = [...(hasTaskset ? ['taskset', '-c', '0'] : []), process.execPath, '--import', 'tsx', runner, path, out];
  return JSON.parse(execFileSync(command[0]!, command.slice(1), { encoding: 'utf8', maxBuffer: 1 << 20 }).trim().split('\n').at(-1)!) as Run;
}

await waitForSettledDeletions();
const loadBefore = load();
const rows: string[] = [];
try {
  for (const [i, { bdf, gib }] of cases.entries()) {
    const path = join(work, `synthetic-${gib}gib.${bdf ? 'bdf' : 'edf'}`);
    const bytes = await writeSyntheticRecording({ path, bdf, channels: 64, rate: 1000, bytes: gib * 2 ** 30 });
    const started = performance.now();
    execFileSync('sh', ['-c', `cat '${path}' > /dev/null`]);
    const catSeconds = (performance.now() - started) / 1000;
    const alone = convert(path, '--no-store');
    const result = convert(path, join(outDir, `out-${i}`));
    const mb = bytes / 1e6;
    rows.push(
      `| ${bdf ? 'BDF' : 'EDF'} ${gib} GiB | ${catSeconds.toFixed(2)} s (${(mb / catSeconds).toFixed(0)} MB/s) | ` +
        `${result.seconds.toFixed(1)} s | **${(mb / result.seconds).toFixed(0)} MB/s** | ${(mb / alone.seconds).toFixed(0)} MB/s | ` +
        `${result.userSeconds.toFixed(1)} + ${result.systemSeconds.toFixed(1)} s | ${(result.maxRssBytes / 2 ** 20).toFixed(0)} MiB | ` +
        `${(result.storeBytes / bytes).toFixed(2)} (${(result.storeBytes / 2 ** 30).toFixed(2)} GiB) |`,
    );
    process.stderr.write(`${rows.at(-1)}\n`);
    await rm(path, { force: true });
  }
} finally {
  await removeSettled(work, outDir);
}
console.log(`Stores written to: ${outDir}`);
console.log(`Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}; conversion pinned to one core: ${hasTaskset}`);
console.log(`Load average (1, 5, 15 min): ${loadBefore} before, ${load()} after\n`);
console.log('| source | cat > /dev/null | convert (wall) | source converted | converter alone (no store) | CPU user + sys | peak RSS | store size / source |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
