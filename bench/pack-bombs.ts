/**
 * The reproducer of decision 0054, run by hand (not a test): `node --import tsx bench/pack-bombs.ts`.
 * Feeds crafted packs to `git index-pack --stdin` (what a push's receive-pack runs) with and without the bounds
 * of a push, and prints each run's pack size, exit, wall and CPU time and peak memory (GNU time).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deltaBombPack, zeroBlobPack, zeroBlobsPack } from '../test/git/crafted-packs.js';
import { loadConfig } from '../src/core/config.js';
import { pushBounds, pushBoundSettings } from '../src/git/push-bounds.js';

const bounds = pushBounds(loadConfig({ ...process.env, DATA_DIR: os.tmpdir() }));
const cases: Array<[string, () => Buffer]> = [
  ['one blob of 400 MiB of zeros', () => zeroBlobPack(400 * 1024 ** 2)],
  ['one blob of 2 GiB of zeros', () => zeroBlobPack(2 * 1024 ** 3)],
  ['2,000 blobs of 1 MiB of zeros', () => zeroBlobsPack(2000, 1024 ** 2)],
  ['a delta of 16 MiB copied 64 times (1 GiB)', () => deltaBombPack(64).pack],
  ['a delta of 16 MiB copied 256 times (4 GiB)', () => deltaBombPack(256).pack],
];
const only = process.argv.slice(2);

for (const [name, make] of cases) {
  if (only.length > 0 && !only.some((o) => name.includes(o))) continue;
  const packBytes = make();
  for (const bounded of [false, true]) {
    if (!bounded && process.env.UNBOUNDED !== '1' && /4 GiB|2 GiB/.test(name)) continue;
    const repo = mkdtempSync(path.join(os.tmpdir(), 'nds-bomb-'));
    execFileSync('git', ['init', '-q', '--bare', repo]);
    const settings = bounded ? Object.entries(pushBoundSettings(bounds)).flatMap(([k, v]) => ['-c', `${k}=${v}`]) : [];
    const limits = bounded ? ['prlimit', `--data=${bounds.process.dataBytes}`, `--cpu=${bounds.process.cpuSeconds}`, '--core=0', '--'] : [];
    const command = [...limits, 'git', ...settings, '-C', repo, 'index-pack', '--stdin', '--fix-thin'];
    const started = Date.now();
    const run = spawnSync('/usr/bin/time', ['-f', '%e s wall, %U s user, %S s system, %M KiB peak', ...command], { input: packBytes, maxBuffer: 1 << 26 });
    const measured = run.stderr.toString().trim().split('\n');
    console.log(`${name}: pack ${packBytes.length.toLocaleString('en')} bytes, ${bounded ? 'bounded' : 'as before'}: exit ${run.status} after ${Date.now() - started} ms`);
    console.log(`    ${measured.slice(-3).join('\n    ')}`);
    rmSync(repo, { recursive: true, force: true });
  }
}
