/**
 * The codec chain of every array in a store: `bytes` (little-endian) then `zstd` at level 1. Chunks are
 * compressed by native zstd (`zstd-napi`, an optional dependency built at install) when it is there, and
 * by @bokuweb/zstd-wasm otherwise; both write standard zstd frames with the content size, which any zstd
 * decoder reads (zarrita uses numcodecs). Native zstd is about four times faster on this machine (588
 * against 150 MB/s at level 1), and compression is most of the converter's time.
 * See docs/decisions/0002-zarr-chunks-and-codec.md and 0003-native-zstd-encoder.md.
 */

export interface ChunkCodec {
  /** The `codecs` list written into each array's zarr.json. */
  readonly metadata: readonly object[];
  encode(bytes: Uint8Array): Promise<Uint8Array>;
}

export const defaultZstdLevel = 1;

type Compress = (bytes: Uint8Array, level: number) => Uint8Array;

/** Which zstd encoder compresses chunks in this process: `native` when zstd-napi loaded. */
export type ZstdEncoderKind = 'native' | 'wasm';

const loaded = new Map<ZstdEncoderKind, Promise<Compress | undefined>>();

async function loadNative(): Promise<Compress | undefined> {
  try {
    const { Compressor } = await import('zstd-napi');
    // One reusable context: a one-shot `compress` would allocate a context per chunk.
    const context = new Compressor();
    let level: number | undefined;
    return (bytes, wanted) => {
      if (level !== wanted) {
        context.setParameters({ compressionLevel: wanted });
        level = wanted;
      }
      return context.compress(bytes);
    };
  } catch {
    return undefined;
  }
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
}
