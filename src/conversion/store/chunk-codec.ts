/**
 * The codec chain of every array in a store: `bytes` (little-endian) then `zstd` at level 1. Chunks are
 * compressed with @bokuweb/zstd-wasm, which copies into WebAssembly memory with one `set` (numcodecs'
 * encoder copies byte by byte and was the converter's main cost); any zstd decoder reads the frames.
 * See docs/decisions/0002-zarr-chunks-and-codec.md for the measurements behind the choice.
 */
import { compress, init } from '@bokuweb/zstd-wasm';

export interface ChunkCodec {
  /** The `codecs` list written into each array's zarr.json. */
  readonly metadata: readonly object[];
  encode(bytes: Uint8Array): Promise<Uint8Array>;
}

export const defaultZstdLevel = 1;

let ready: Promise<void> | undefined;

export class ZstdChunkCodec implements ChunkCodec {
  readonly metadata: readonly object[];
  readonly #level: number;

  constructor(level = defaultZstdLevel) {
    this.#level = level;
    this.metadata = [
      { name: 'bytes', configuration: { endian: 'little' } },
      { name: 'zstd', configuration: { level, checksum: false } },
    ];
  }

  async encode(bytes: Uint8Array): Promise<Uint8Array> {
    ready ??= init();
    await ready;
    return compress(bytes, this.#level);
  }
}
