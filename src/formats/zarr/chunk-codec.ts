/**
 * The codec chain of every array in a store: `bytes` (little-endian) then `zstd` at level 1. Chunks are
 * compressed by native zstd (`zstd-napi`, an optional dependency built at install) when it is there, and
 * by @bokuweb/zstd-wasm otherwise; both write standard zstd frames with the content size, which any zstd
 * decoder reads (zarrita uses numcodecs). Native zstd is about four times faster on this machine (588
 * against 150 MB/s at level 1), and compression is most of the converter's time.
 * See docs/decisions/0002-zarr-chunks-and-codec.md, 0003-native-zstd-encoder.md and
 * 0004-zstd-window-and-chunk-buffers.md.
 */
import { createRequire } from 'node:module';
import { BufferPool } from '../../core/buffer-pool.js';

export interface ChunkCodec {
  /** The `codecs` list written into each array's zarr.json. */
  readonly metadata: readonly object[];
  /** Encodes one chunk. The result is the caller's until it gives it back with `release`. */
  encode(bytes: Uint8Array): Promise<Uint8Array>;
  /**
   * Gives back an array `encode` returned, once nothing reads it any more, so that its memory serves a
   * later chunk. Calling it is optional; arrays the codec did not make are ignored.
   */
  release?(encoded: Uint8Array): void;
}

export const defaultZstdLevel = 1;

/**
 * Matches reach back at most 128 KiB (decision 0004). On 1 MiB chunks of int32 samples, level 1's own
 * window (512 KiB) made native zstd twice as slow for chunks less than 1 % smaller. Frames record their
 * window, so decoders need nothing; the WebAssembly fallback cannot set it and keeps level 1's.
 */
export const zstdWindowLog = 17;

type Compress = (bytes: Uint8Array, level: number) => Uint8Array;

/** Where the native encoder's outputs come from and go back to (`ChunkCodec.release`). */
const outputs = new BufferPool();

/** Which zstd encoder compresses chunks in this process: `native` when zstd-napi loaded. */
export type ZstdEncoderKind = 'native' | 'wasm';

const loaded = new Map<ZstdEncoderKind, Promise<Compress | undefined>>();

async function loadNative(): Promise<Compress | undefined> {
  let zstd: typeof import('zstd-napi/binding.js');
  try {
    zstd = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js');
  } catch {
    return undefined;
  }
  // One reusable context, and outputs from a pool: zstd-napi's `Compressor.compress` allocates an output of
  // the worst-case size for every chunk and copies the result into another fresh one (15 % of the time).
  const context = new zstd.CCtx();
  let level: number | undefined;
  return (bytes, wanted) => {
    if (level !== wanted) {
      context.reset(zstd.ResetDirective.parameters);
      context.setParameter(zstd.CParameter.compressionLevel, wanted);
      context.setParameter(zstd.CParameter.windowLog, zstdWindowLog);
      level = wanted;
    }
    const out = outputs.take(zstd.compressBound(bytes.length));
    return out.subarray(0, context.compress2(out, bytes));
  };
}

async function loadWasm(): Promise<Compress> {
  const { compress, init } = await import('@bokuweb/zstd-wasm');
  await init();
  return (bytes, level) => compress(bytes, level);
}

function load(kind: ZstdEncoderKind): Promise<Compress | undefined> {
  let found = loaded.get(kind);
  if (!found) {
    found = kind === 'native' ? loadNative() : loadWasm();
    loaded.set(kind, found);
  }
  return found;
}

/** The encoder to use: native when it loads (unless `prefer` is `wasm`), WebAssembly otherwise. */
export async function zstdEncoder(prefer: ZstdEncoderKind = 'native'): Promise<{ kind: ZstdEncoderKind; compress: Compress }> {
  const native = prefer === 'native' ? await load('native') : undefined;
  return native ? { kind: 'native', compress: native } : { kind: 'wasm', compress: (await load('wasm'))! };
}

export class ZstdChunkCodec implements ChunkCodec {
  readonly metadata: readonly object[];
  readonly #level: number;
  readonly #prefer: ZstdEncoderKind;

  /** `prefer: 'wasm'` skips the native encoder (tests and benchmarks compare the two). */
  constructor(level = defaultZstdLevel, prefer: ZstdEncoderKind = 'native') {
    this.#level = level;
    this.#prefer = prefer;
    this.metadata = [
      { name: 'bytes', configuration: { endian: 'little' } },
      { name: 'zstd', configuration: { level, checksum: false } },
    ];
  }

  async encode(bytes: Uint8Array): Promise<Uint8Array> {
    const { compress } = await zstdEncoder(this.#prefer);
    return compress(bytes, this.#level);
  }

  release(encoded: Uint8Array): void {
    outputs.give(encoded);
  }
}
