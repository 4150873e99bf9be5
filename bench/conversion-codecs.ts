/**
 * Codec measurement on the fixtures (docs/decisions/0002): every fixture's level-0 chunks, as the store
 * writer cuts them, through each candidate codec. Prints ratio, encode MB/s (what the converter pays) and
 * decode MB/s through numcodecs (what zarrita pays in the browser and in Node).
 * Run: node --import tsx bench/conversion-codecs.ts
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Zstd from 'numcodecs/zstd';
import Blosc from 'numcodecs/blosc';
import { compress, init } from '@bokuweb/zstd-wasm';
import { openRecording } from '../src/formats/readers/open-recording.js';
import { chunkSamplesFor } from '../src/formats/zarr/zarr-metadata.js';
import { allocate } from '../src/formats/readers/interleaved.js';

const fixtures = fileURLToPath(new URL('../test/fixtures', import.meta.url));

async function dataFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await dataFiles(path)));
    else if (/\.(edf|bdf|vhdr|set)$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Level-0 chunks of one file: [≤64 channels, chunk_samples] per rate group, padded like the writer pads. */
async function chunksOf(path: string): Promise<{ chunks: Uint8Array[]; typesize: number }> {
  const reader = await openRecording(path);
  const all: number[][] = reader.channels.map(() => []);
  for await (const block of reader.blocks()) block.forEach((a, c) => all[c]!.push(...a));
  const chunks: Uint8Array[] = [];
  const rates = [...new Set(reader.channels.map((c) => c.rate))];
  for (const rate of rates) {
    const idx = reader.channels.map((c, i) => (c.rate === rate ? i : -1)).filter((i) => i >= 0);
    const n = all[idx[0]!]!.length;
    const cs = chunkSamplesFor(rate, n);
    for (let r0 = 0; r0 < idx.length; r0 += 64) {
      const rows = idx.slice(r0, r0 + 64);
      for (let t0 = 0; t0 < n; t0 += cs) {
        const buf = allocate(reader.sampleType, rows.length * cs);
        rows.forEach((ci, r) => buf.set(all[ci]!.slice(t0, t0 + cs), r * cs));
        chunks.push(new Uint8Array(buf.buffer));
      }
    }
  }
  const typesize = { int16: 2, int32: 4, float32: 4, float64: 8 }[reader.sampleType];
  await reader.close();
  return { chunks, typesize };
}

interface Candidate {
  name: string;
  encode: (bytes: Uint8Array, typesize: number) => Promise<Uint8Array>;
  decode: (bytes: Uint8Array) => Promise<Uint8Array>;
}

await init();
const zstdDecoder = Zstd.fromConfig({ level: 1 });
const candidates: Candidate[] = [
  ...[-3, 1, 3, 5, 9].map((level) => ({
    name: `bytes+zstd(level ${level})`,
    encode: async (b: Uint8Array) => compress(b, level),
    decode: (b: Uint8Array) => zstdDecoder.decode(b),
  })),
  ...([[1, 1], [5, 1], [1, 2]] as const).map(([clevel, shuffle]) => {
    return {
      name: `blosc(zstd, clevel ${clevel}, ${shuffle === 1 ? 'shuffle' : 'bitshuffle'})`,
      encode: (b: Uint8Array, typesize: number) => Blosc.fromConfig({ cname: 'zstd', clevel, shuffle, typesize } as never).encode(b),
      decode: (b: Uint8Array) => Blosc.fromConfig({ cname: 'zstd', clevel, shuffle } as never).decode(b),
    };
  }),
];

const files = await dataFiles(fixtures);
const sets = [];
for (const f of files) {
  try {
    sets.push({ f, ...(await chunksOf(f)) });
  } catch {
    // The 0-byte placeholder of eeg_matchingpennies has no chunks.
  }
}
const raw = sets.reduce((n, s) => n + s.chunks.reduce((m, c) => m + c.length, 0), 0);
console.log(`${sets.length} fixture files, ${sets.reduce((n, s) => n + s.chunks.length, 0)} level-0 chunks, ${(raw / 1e6).toFixed(1)} MB raw\n`);
console.log('| codec | ratio | encode MB/s | decode MB/s (numcodecs) |');
console.log('|---|---:|---:|---:|');
for (const c of candidates) {
  let compressed = 0;
  let encodeMs = 0;
  let decodeMs = 0;
  for (let rep = 0; rep < 3; rep++) {
    compressed = 0;
    for (const s of sets) {
      for (const chunk of s.chunks) {
        let t = performance.now();
        const z = await c.encode(chunk, s.typesize);
        encodeMs += performance.now() - t;
        compressed += z.length;
        t = performance.now();
        await c.decode(z);
        decodeMs += performance.now() - t;
      }
    }
  }
  const mbps = (ms: number) => ((3 * raw) / 1e6 / (ms / 1000)).toFixed(0);
  console.log(`| ${c.name} | ${(raw / compressed).toFixed(2)} | ${mbps(encodeMs)} | ${mbps(decodeMs)} |`);
}
