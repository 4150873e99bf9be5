/**
 * A bounded fuzz run: random mutations (fixed seed) of fixture and synthetic files in every format. Each
 * case must convert or fail with a ConversionError, within two seconds, without the process growing
 * beyond a fixed memory bound.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRecording } from '../../src/formats/readers/open-recording.js';
import { writeStore } from '../../src/formats/zarr/store-writer.js';
import { isConversionError } from '../../src/formats/conversion-errors.js';
import { NullSink } from './support/null-sink.js';
import { writeMat5 } from './support/mat5-writer.js';
import { writeMat73 } from './support/mat73-writer.js';
import { fixturesDir } from './support/fixtures.js';

const casesPerSeed = Number(process.env['NDS_FUZZ_CASES'] ?? 40);
const memoryBound = 1536 << 20;

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
    assert.ok(process.memoryUsage().rss < memoryBound, `${path}: RSS ${process.memoryUsage().rss >> 20} MiB`);
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
