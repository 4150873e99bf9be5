/**
 * zstd from `node:zlib` (Node.js 22.15+ and 24) against zstd-napi (decision 0029): the same chunks, level 1,
 * window 2^17, as the store writer compresses them. Chunks: 128 KiB of 16-bit EEG-like signal (a random walk
 * with a 10 Hz rhythm and noise), as level-0 chunks hold. Times are CPU time of this process, best of three.
 * Run: node --import tsx bench/zstd-zlib.ts   (on Node.js 22.15+ or 24; zlib's zstd is absent before)
 */
import { createRequire } from 'node:module';
import zlib from 'node:zlib';
import { zstdWindowLog } from '../src/formats/zarr/chunk-codec.js';

const require = createRequire(import.meta.url);
const CHUNKS = 512;
const CHUNK_BYTES = 128 * 1024;

function chunk(seed: number): Uint8Array {
  const samples = new Int16Array(CHUNK_BYTES / 2);
  let walk = seed % 1000;
  let rnd = seed * 2654435761;
  for (let i = 0; i < samples.length; i++) {
    rnd = (rnd * 1103515245 + 12345) >>> 0;
    walk += ((rnd >>> 16) % 7) - 3;
    samples[i] = Math.round(walk + 400 * Math.sin((2 * Math.PI * 10 * i) / 1000) + ((rnd >>> 8) % 40));
  }
  return new Uint8Array(samples.buffer);
}

const chunks = Array.from({ length: CHUNKS }, (_, i) => chunk(i + 1));
const megabytes = (CHUNKS * CHUNK_BYTES) / 1e6;

function cpuSeconds(run: () => number): { seconds: number; bytes: number } {
  let best = Infinity;
  let bytes = 0;
  for (let round = 0; round < 3; round++) {
    const start = process.cpuUsage();
    bytes = run();
    const used = process.cpuUsage(start);
    best = Math.min(best, (used.user + used.system) / 1e6);
  }
  return { seconds: best, bytes };
}

const results: Array<[string, { seconds: number; bytes: number }]> = [];
try {
  const z = require('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js');
  const ctx = new z.CCtx();
  ctx.setParameter(z.CParameter.compressionLevel, 1);
  ctx.setParameter(z.CParameter.windowLog, zstdWindowLog);
  const out = Buffer.alloc(z.compressBound(CHUNK_BYTES));
  results.push(['zstd-napi (baseline)', cpuSeconds(() => chunks.reduce((n, c) => n + ctx.compress2(out, c), 0))]);
} catch (err) {
  console.log(`zstd-napi: not loaded (${(err as Error).message.split('\n')[0]})`);
}
const zstdCompressSync = (zlib as unknown as { zstdCompressSync?: (b: Uint8Array, o: object) => Buffer }).zstdCompressSync;
if (zstdCompressSync) {
  const { ZSTD_c_compressionLevel, ZSTD_c_windowLog } = zlib.constants as unknown as Record<string, number>;
  const params = { [ZSTD_c_compressionLevel!]: 1, [ZSTD_c_windowLog!]: zstdWindowLog };
  results.push(['node:zlib zstdCompressSync', cpuSeconds(() => chunks.reduce((n, c) => n + zstdCompressSync(c, { params }).length, 0))]);
} else console.log(`node:zlib has no zstd on Node ${process.version}`);

console.log(`Node ${process.version}, ${CHUNKS} chunks of ${CHUNK_BYTES / 1024} KiB (${megabytes.toFixed(0)} MB), level 1, window 2^${zstdWindowLog}, best of 3`);
for (const [name, r] of results) console.log(`${name.padEnd(28)} ${(megabytes / r.seconds).toFixed(0).padStart(5)} MB/s CPU, ratio ${((CHUNKS * CHUNK_BYTES) / r.bytes).toFixed(2)}`);
