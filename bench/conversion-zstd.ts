/**
 * zstd settings on the benchmark's own chunks (docs/decisions/0004): synthetic 64-channel EDF and BDF are
 * cut into level-0 and view chunks exactly as the store writer cuts them, then each candidate encodes them.
 * Times are CPU time of this process (robust to other work on the machine), best of three; decode goes
 * through numcodecs, as zarrita does. Blosc frames are built here (byte shuffle in JavaScript, native zstd)
 * to see what a shuffle would buy.
 * Run: node --import tsx bench/conversion-zstd.ts [--mib 128]
 */
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Zstd from 'numcodecs/zstd';
import Blosc from 'numcodecs/blosc';
import { openRecording } from '../src/formats/readers/open-recording.js';
import { writeStore } from '../src/formats/zarr/store-writer.js';
import { writeSyntheticRecording } from './conversion-synthetic.js';

const args = process.argv.slice(2);
const mib = Number(args[args.indexOf('--mib') + 1] ?? 128) || 128;
const zstd = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js');
const { Compressor } = createRequire(import.meta.url)('zstd-napi') as typeof import('zstd-napi');

type Chunk = { view: boolean; bytes: Uint8Array };

async function chunksOf(bdf: boolean, dir: string): Promise<{ chunks: Chunk[]; sourceBytes: number; typesize: 2 | 4 }> {
  const path = join(dir, bdf ? 'x.bdf' : 'x.edf');
  const sourceBytes = await writeSyntheticRecording({ path, bdf, channels: 64, rate: 1000, bytes: mib * 2 ** 20 });
  const chunks: Chunk[] = [];
  const reader = await openRecording(path);
  // An identity codec: the sink receives the raw chunks as the writer cuts them.
  await writeStore(
    reader,
    { put: async (key, bytes) => void (key.includes('/c/') && !key.startsWith('events/') && chunks.push({ view: key.includes('/view/'), bytes: bytes.slice() })) },
    { sourcePath: 'x', files: [], codec: { metadata: [], encode: async (bytes) => bytes } },
  );
  await reader.close();
  return { chunks, sourceBytes, typesize: bdf ? (4 as const) : (2 as const) };
}

const context = new zstd.CCtx();
const out = new Uint8Array(zstd.compressBound(8 << 20));
function zstdWith(params: Partial<Record<keyof typeof zstd.CParameter, number>>): (bytes: Uint8Array) => Uint8Array {
  return (bytes) => {
    context.reset(zstd.ResetDirective.parameters);
    for (const [name, value] of Object.entries(params)) context.setParameter(zstd.CParameter[name as keyof typeof zstd.CParameter], value!);
    return out.subarray(0, context.compress2(out, bytes));
  };
}

/** Byte shuffle (all first bytes, then all second bytes ...), as blosc's `shuffle` does within a block. */
function shuffle(src: Uint8Array, typesize: 2 | 4, dst: Uint8Array): Uint8Array {
  const n = src.length / typesize;
  const words = new Uint32Array(src.buffer, src.byteOffset, src.length >> 2);
  if (typesize === 2) {
    for (let i = 0, j = 0; i < words.length; i++, j += 2) {
      const v = words[i]!;
      dst[j] = v & 0xff;
      dst[j + 1] = (v >>> 16) & 0xff;
      dst[n + j] = (v >>> 8) & 0xff;
      dst[n + j + 1] = v >>> 24;
    }
  } else {
    for (let i = 0; i < n; i++) {
      const v = words[i]!;
      dst[i] = v & 0xff;
      dst[n + i] = (v >>> 8) & 0xff;
      dst[2 * n + i] = (v >>> 16) & 0xff;
      dst[3 * n + i] = v >>> 24;
    }
  }
  return dst.subarray(0, src.length);
}

/** A blosc1 frame of one block, split in `typesize` byte streams, each a zstd frame (what c-blosc reads). */
function bloscFrame(bytes: Uint8Array, typesize: 2 | 4, scratch: Uint8Array): Uint8Array {
  const shuffled = shuffle(bytes, typesize, scratch);
  const size = bytes.length / typesize;
  const parts = Array.from({ length: typesize }, (_, s) => zstdWith({ compressionLevel: 1, windowLog: 17 })(shuffled.subarray(s * size, (s + 1) * size)).slice());
  const total = 20 + parts.reduce((t, p) => t + 4 + p.length, 0);
  const frame = new Uint8Array(total);
  const view = new DataView(frame.buffer);
  frame.set([2, 1, 0x01 | (4 << 5), typesize]); // version 2, zstd format 1; flags: byte shuffle, split, zstd
  view.setUint32(4, bytes.length, true);
  view.setUint32(8, bytes.length, true); // one block
  view.setUint32(12, total, true);
  view.setInt32(16, 20, true); // the block starts after the header and this one offset
  let at = 20;
  for (const part of parts) {
    view.setInt32(at, part.length, true);
    frame.set(part, at + 4);
    at += 4 + part.length;
  }
  return frame;
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

const dir = await mkdtemp(join(tmpdir(), 'nds-zstd-'));
try {
  const napi = new Compressor();
  napi.setParameters({ compressionLevel: 1 });
  const zstdDecoder = Zstd.fromConfig({ level: 1 } as never);
  const bloscDecoder = Blosc.fromConfig({ cname: 'zstd', clevel: 1, shuffle: 1 } as never);
  for (const bdf of [false, true]) {
    const { chunks, sourceBytes, typesize } = await chunksOf(bdf, dir);
    const scratch = new Uint8Array(8 << 20);
    const candidates: { name: string; encode: (b: Uint8Array) => Uint8Array; decode: (b: Uint8Array) => Promise<Uint8Array> }[] = [
      { name: 'zstd-napi Compressor, level 1 (decision 0003)', encode: (b) => napi.compress(b), decode: (b) => zstdDecoder.decode(b) },
      { name: 'context, level 1 (window 2^19)', encode: zstdWith({ compressionLevel: 1 }), decode: (b) => zstdDecoder.decode(b) },
      ...[15, 16, 17, 18].map((w) => ({ name: `context, level 1, window 2^${w}`, encode: zstdWith({ compressionLevel: 1, windowLog: w }), decode: (b: Uint8Array) => zstdDecoder.decode(b) })),
      { name: 'context, level -1', encode: zstdWith({ compressionLevel: -1 }), decode: (b) => zstdDecoder.decode(b) },
      { name: 'context, level 3', encode: zstdWith({ compressionLevel: 3 }), decode: (b) => zstdDecoder.decode(b) },
      { name: 'blosc(zstd 1, shuffle), JS shuffle', encode: (b) => bloscFrame(b, typesize, scratch), decode: (b) => bloscDecoder.decode(b) },
    ];
    const raw = (view: boolean) => chunks.filter((c) => c.view === view).reduce((t, c) => t + c.bytes.length, 0);
    console.log(`\n${bdf ? 'BDF' : 'EDF'} ${(sourceBytes / 2 ** 20).toFixed(0)} MiB: ${chunks.filter((c) => !c.view).length} level-0 chunks of ${chunks[0]!.bytes.length} B, ${chunks.filter((c) => c.view).length} view chunks\n`);
    console.log('| encoder | level 0 ratio | views ratio | store / source | encode MB/s (raw) | CPU s per GiB of source | decode MB/s (numcodecs) |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const c of candidates) {
      let best = Infinity;
      const sizes = { level0: 0, views: 0 };
      for (let rep = 0; rep < 3; rep++) {
        sizes.level0 = 0;
        sizes.views = 0;
        const since = process.cpuUsage();
        for (const chunk of chunks) sizes[chunk.view ? 'views' : 'level0'] += c.encode(chunk.bytes).length;
        best = Math.min(best, cpuMs(since));
      }
      let decodeMs = 0;
      let decoded = 0;
      for (const chunk of chunks.filter((x) => !x.view).slice(0, 64)) {
        const encoded = c.encode(chunk.bytes).slice();
        const since = process.cpuUsage();
        const back = await c.decode(encoded);
        decodeMs += cpuMs(since);
        decoded += chunk.bytes.length;
        if (Buffer.compare(Buffer.from(back), Buffer.from(chunk.bytes)) !== 0) throw new Error(`${c.name}: round trip differs`);
      }
      const total = raw(false) + raw(true);
      console.log(
        `| ${c.name} | ${(raw(false) / sizes.level0).toFixed(2)} | ${(raw(true) / sizes.views).toFixed(2)} | ${((sizes.level0 + sizes.views) / sourceBytes).toFixed(2)} | ` +
          `${(total / 1e3 / best).toFixed(0)} | ${(best / 1000 / (sourceBytes / 2 ** 30)).toFixed(2)} | ${(decoded / 1e3 / decodeMs).toFixed(0)} |`,
      );
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
