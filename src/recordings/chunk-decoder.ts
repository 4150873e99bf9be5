/**
 * Decodes a store's chunks (`bytes` little-endian + `zstd`, docs/conversion.md): native zstd (zstd-napi, the
 * optional dependency the converter also uses) when it loaded, WebAssembly otherwise. Every chunk frame
 * records its content size, so the output is allocated once at its exact length.
 */
import { createRequire } from 'node:module';
import { zstdEncoder } from '../formats/zarr/chunk-codec.js';

type Decompress = (frame: Uint8Array, expectedBytes: number) => Uint8Array | Promise<Uint8Array>;

let loaded: Promise<Decompress> | undefined;

async function load(): Promise<Decompress> {
  try {
    const zstd = createRequire(import.meta.url)('zstd-napi/binding.js') as typeof import('zstd-napi/binding.js');
    const context = new zstd.DCtx();
    return (frame, expected) => {
      const size = zstd.getFrameContentSize(frame) ?? expected;
      const out = new Uint8Array(size);
      const n = context.decompress(out, frame);
      return n === size ? out : out.subarray(0, n);
    };
  } catch {
    // @bokuweb/zstd-wasm, initialised once per process by the converter's own loader (`zstdEncoder`): calling
    // its `init` a second time re-instantiates the module under the converter and corrupted its frames.
    // numcodecs (zarrita's decoder, 2.5 times slower here) takes any frame it refuses.
    await zstdEncoder('wasm');
    const { decompress } = await import('@bokuweb/zstd-wasm');
    const { default: Zstd } = await import('numcodecs/zstd');
    const codec = Zstd.fromConfig({ level: 1 });
    return (frame) => {
      try {
        return decompress(frame);
      } catch {
        return codec.decode(frame) as unknown as Promise<Uint8Array>;
      }
    };
  }
}

/** The decompressed bytes of one chunk object; `expectedBytes` is the chunk's size when the frame omits it. */
export async function decodeChunk(frame: Uint8Array, expectedBytes: number): Promise<Uint8Array> {
  loaded ??= load();
  return (await loaded)(frame, expectedBytes);
}
