/**
 * A bounded fuzz run: random mutations (fixed seed) of fixture and synthetic files in every format. Each
 * case must convert or fail with a ConversionError, within two seconds, without the process growing
 * beyond a fixed memory bound. Then random BIDS trees with links, FIFOs and headers that name files
 * outside the tree (docs/security.md): whatever a case holds, no file outside the tree is ever opened.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { convertRecording } from '../../src/formats/convert-recording.js';
import { openRecording } from '../../src/formats/readers/open-recording.js';
import { writeStore } from '../../src/formats/zarr/store-writer.js';
import { isConversionError } from '../../src/formats/conversion-errors.js';
import { NullSink } from './support/null-sink.js';
import { writeMat5 } from './support/mat5-writer.js';
import { writeMat73 } from './support/mat73-writer.js';
import { fixturesDir } from './support/fixtures.js';

const casesPerSeed = Number(process.env['NDS_FUZZ_CASES'] ?? 40);
/**
 * How much a case may grow the process (a header that claims gigabytes must not be allocated): growth, not the
 * whole RSS, as the grouped runner's process holds what earlier test files left for the collector.
 */
const memoryGrowthBound = 1024 << 20;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nds-fuzz-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(bytes: Uint8Array, random: () => number, headerBytes: number): Uint8Array {
  const pick = (n: number) => Math.floor(random() * n);
  const out = bytes.slice();
  switch (pick(5)) {
    case 0: // flip bytes in the header
      for (let k = 1 + pick(8); k > 0; k--) out[pick(Math.min(headerBytes, out.length))] = pick(256);
      return out;
    case 1: // truncate anywhere
      return out.subarray(0, pick(out.length));
    case 2: // digits into a header field
      for (let k = 1 + pick(4), at = pick(Math.min(headerBytes, out.length)); k > 0; k--, at++) out[at] = 0x30 + pick(10);
      return out;
    case 3: // a large number into a header field
      out.set(new TextEncoder().encode(String(10 ** (1 + pick(9)))), pick(Math.max(1, Math.min(headerBytes, out.length) - 10)));
      return out;
    default: // bytes anywhere
      for (let k = 1 + pick(64); k > 0; k--) out[pick(out.length)] = pick(256);
      return out;
  }
}

async function attempt(path: string): Promise<string> {
  const started = performance.now();
  const rssBefore = process.memoryUsage().rss;
  try {
    const reader = await openRecording(path);
    try {
      await writeStore(reader, new NullSink(), { sourcePath: path, files: [] });
    } finally {
      await reader.close();
    }
    return 'converted';
  } catch (err) {
    if (!isConversionError(err)) throw new Error(`${path}: not a conversion error: ${(err as Error)?.stack ?? String(err)}`, { cause: err });
    return err.code;
  } finally {
    const ms = performance.now() - started;
    assert.ok(ms < 2000, `${path} took ${ms.toFixed(0)} ms`);
    const grown = process.memoryUsage().rss - rssBefore;
    assert.ok(grown < memoryGrowthBound, `${path}: RSS grew by ${grown >> 20} MiB (to ${process.memoryUsage().rss >> 20} MiB)`);
  }
}

interface Seed {
  name: string;
  ext: string;
  headerBytes: number;
  bytes: () => Promise<Uint8Array>;
  /** Companion files copied beside each mutated case, named after the case's stem. */
  companions?: Record<string, string>;
}

const seeds: Seed[] = [
  { name: 'test_uneven_samp.edf', ext: '.edf', headerBytes: 768, bytes: () => readFile(join(fixturesDir, 'mne-python/edf/test_uneven_samp.edf')) },
  { name: 'duplicate_channel_labels.edf', ext: '.edf', headerBytes: 1280, bytes: () => readFile(join(fixturesDir, 'mne-python/edf/duplicate_channel_labels.edf')) },
  { name: 'test.bdf', ext: '.bdf', headerBytes: 18944, bytes: () => readFile(join(fixturesDir, 'mne-python/edf/test.bdf')) },
  {
    name: 'test.vhdr', ext: '.vhdr', headerBytes: 2000, bytes: () => readFile(join(fixturesDir, 'mne-python/brainvision/test.vhdr')),
    companions: { '.eeg': join(fixturesDir, 'mne-python/brainvision/test.eeg'), '.vmrk': join(fixturesDir, 'mne-python/brainvision/test.vmrk') },
  },
  {
    name: 'inline.set (MAT v5)', ext: '.set', headerBytes: 400,
    bytes: async () => writeMat5({ EEG: { struct: [{ nbchan: { double: [2] }, pnts: { double: [50] }, trials: { double: [1] }, srate: { double: [100] }, data: { single: new Float32Array(100).map((_, i) => i), dims: [2, 50] }, chanlocs: { struct: [{ labels: 'A' }, { labels: 'B' }] } }] } }, false),
  },
  {
    name: 'v73.set (MAT v7.3)', ext: '.set', headerBytes: 4096,
    bytes: async () => {
      const path = join(dir, 'seed73.set');
      await writeMat73(path, { nbchan: 2, pnts: 50, srate: 100, data: new Float32Array(100), labels: ['A', 'B'], events: [{ type: 'x', latency: 3 }] });
      return readFile(path);
    },
  },
];

describe('fuzzing the readers and the store writer', () => {
  seeds.forEach((seed, s) => {
    it(`survives ${casesPerSeed} mutations of ${seed.name}`, async () => {
      const random = rng(1000 + s);
      const original = await seed.bytes();
      const outcomes = new Map<string, number>();
      for (let k = 0; k < casesPerSeed; k++) {
        const caseDir = join(dir, `${s}-${k}`);
        await mkdir(caseDir);
        const path = join(caseDir, `test${seed.ext}`);
        await writeFile(path, mutate(original, random, seed.headerBytes));
        for (const [ext, from] of Object.entries(seed.companions ?? {})) await copyFile(from, join(caseDir, `test${ext}`));
        const outcome = await attempt(path);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        await rm(caseDir, { recursive: true, force: true });
      }
      assert.ok([...outcomes.keys()].some((o) => o !== 'converted'), `no mutation was rejected: ${JSON.stringify([...outcomes])}`);
    });
  });
});

/**
 * Every path a conversion opens, as a real path (links resolved), recorded by wrapping node's file-opening
 * functions for the duration of `run`: the oracle is the file system's, not the converter's own checks.
 */
async function openedDuring<T>(run: () => Promise<T>): Promise<{ result: T | Error; opened: string[] }> {
  const opened: string[] = [];
  const record = (p: unknown) => {
    if (typeof p !== 'string') return;
    try {
      opened.push(fs.realpathSync(p));
    } catch {
      opened.push(resolve(p));
    }
  };
  const names = ['open', 'openSync', 'readFile', 'readFileSync', 'createReadStream'] as const;
  const saved = { promisesOpen: fs.promises.open, promisesReadFile: fs.promises.readFile, ...Object.fromEntries(names.map((n) => [n, fs[n]])) } as Record<string, (...args: unknown[]) => unknown>;
  const wrap = (original: (...args: unknown[]) => unknown) => (...args: unknown[]) => {
    record(args[0]);
    return original(...args);
  };
  fs.promises.open = wrap(saved.promisesOpen!) as typeof fs.promises.open;
  fs.promises.readFile = wrap(saved.promisesReadFile!) as typeof fs.promises.readFile;
  for (const n of names) (fs as unknown as Record<string, unknown>)[n] = wrap(saved[n]!);
  syncBuiltinESMExports();
  try {
    return { result: await run().catch((err: Error) => err), opened };
  } finally {
    fs.promises.open = saved.promisesOpen as typeof fs.promises.open;
    fs.promises.readFile = saved.promisesReadFile as typeof fs.promises.readFile;
    for (const n of names) (fs as unknown as Record<string, unknown>)[n] = saved[n];
    syncBuiltinESMExports();
  }
}

interface TreeSeed {
  name: string;
  /** The recording's files, by extension, from the fixtures (the primary first). */
  files: Record<string, string>;
  /** Header fields naming a companion (BrainVision): mutated to point out of the tree. */
  named?: string[];
}

const treeSeeds: TreeSeed[] = [
  { name: 'EDF', files: { '.edf': join(fixturesDir, 'mne-python/edf/test_uneven_samp.edf') } },
  {
    name: 'BrainVision',
    files: { '.vhdr': join(fixturesDir, 'mne-python/brainvision/test.vhdr'), '.eeg': join(fixturesDir, 'mne-python/brainvision/test.eeg'), '.vmrk': join(fixturesDir, 'mne-python/brainvision/test.vmrk') },
    named: ['DataFile', 'MarkerFile'],
  },
];

describe('fuzzing trees with links and names that lead out', () => {
  treeSeeds.forEach((seed, s) => {
    it(`opens no file outside the tree in ${casesPerSeed} ${seed.name} trees`, async () => {
      const random = rng(2000 + s);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const outcomes = new Map<string, number>();
      for (let k = 0; k < casesPerSeed; k++) {
        const caseDir = join(dir, `tree-${s}-${k}`);
        const root = join(caseDir, 'dataset');
        const outside = join(caseDir, 'outside');
        const eeg = join(root, 'sub-01', 'eeg');
        await mkdir(eeg, { recursive: true });
        await mkdir(outside);
        const stem = 'sub-01_task-fuzz_eeg';
        // Outside the tree, a copy of each file of the recording: following a link to it would convert.
        for (const [ext, from] of Object.entries(seed.files)) await copyFile(from, join(outside, `${stem}${ext}`));
        await writeFile(join(outside, 'sub-01_task-fuzz_channels.tsv'), 'name\ttype\tunits\nsecret\tEEG\tuV\n');
        await writeFile(join(root, 'dataset_description.json'), '{"Name": "fuzz", "BIDSVersion": "1.9.0"}');
        for (const [ext, from] of Object.entries(seed.files)) await copyFile(from, join(eeg, `${stem}${ext}`));
        const names = [...Object.keys(seed.files).map((ext) => `${stem}${ext}`), 'sub-01_task-fuzz_channels.tsv', 'sub-01_task-fuzz_events.tsv', 'sub-01_task-fuzz_eeg.json'];
        await writeFile(join(eeg, 'sub-01_task-fuzz_channels.tsv'), 'name\ttype\tunits\n');
        await writeFile(join(eeg, 'sub-01_task-fuzz_events.tsv'), 'onset\tduration\ttrial_type\n1\t0\tx\n');
        await writeFile(join(eeg, 'sub-01_task-fuzz_eeg.json'), '{"TaskName": "fuzz"}');
        for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
          const name = pick(names);
          const at = join(eeg, name);
          await rm(at, { recursive: true, force: true });
          switch (pick(['absolute', 'relative', 'inside', 'dangling', 'fifo', 'folder'] as const)) {
            case 'absolute':
              await symlink(join(outside, name), at);
              break;
            case 'relative':
              await symlink(relative(eeg, join(outside, name)), at);
              break;
            case 'inside': // a link that stays in the tree, to a copy of the file itself
              await copyFile(join(outside, name), join(root, `copy-${name}`)).catch(() => writeFile(join(root, `copy-${name}`), ''));
              await symlink(join('..', '..', `copy-${name}`), at);
              break;
            case 'dangling':
              await symlink(join(outside, 'missing'), at);
              break;
            case 'fifo':
              execFileSync('mkfifo', [at]);
              break;
            case 'folder': // the file's name through a linked folder
              await symlink(outside, join(eeg, 'linked')).catch(() => undefined);
              await symlink(join('linked', name), at);
              break;
          }
        }
        if (seed.named && random() < 0.7) {
          const header = join(eeg, `${stem}.vhdr`);
          const text = await readFile(header, 'latin1').catch(() => undefined);
          if (text !== undefined && !(await fs.promises.lstat(header)).isSymbolicLink()) {
            const field = pick(seed.named);
            const target = join(outside, `${stem}${field === 'DataFile' ? '.eeg' : '.vmrk'}`);
            const value = pick([target, relative(eeg, target), relative(eeg, target).split(sep).join('\\'), `linked/${stem}.eeg`, '..', '.', '']);
            await writeFile(header, text.replace(new RegExp(`^${field}=.*$`, 'm'), `${field}=${value}`), 'latin1');
            if (value.startsWith('linked/')) await symlink(outside, join(eeg, 'linked')).catch(() => undefined);
          }
        }
        const primary = join(eeg, `${stem}${Object.keys(seed.files)[0]}`);
        const started = performance.now();
        const { result, opened } = await openedDuring(() => convertRecording({ dataPath: primary, bidsRoot: root, sink: new NullSink() }));
        const ms = performance.now() - started;
        assert.ok(ms < 2000, `case ${k} took ${ms.toFixed(0)} ms`);
        if (result instanceof Error && !isConversionError(result)) throw new Error(`case ${k}: not a conversion error: ${result.stack}`, { cause: result });
        const realRoot = fs.realpathSync(root) + sep;
        const escaped = opened.filter((p) => p.startsWith(dirname(realRoot)) && !p.startsWith(realRoot));
        assert.deepEqual(escaped, [], `case ${k} opened files outside its tree`);
        const outcome = result instanceof Error ? (result as { code: string }).code : 'converted';
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        await rm(caseDir, { recursive: true, force: true });
      }
      assert.ok(outcomes.has('file_read_error'), `no case was refused: ${JSON.stringify([...outcomes])}`);
      assert.ok(outcomes.has('converted'), `no case converted: ${JSON.stringify([...outcomes])}`);
    });
  });
});
