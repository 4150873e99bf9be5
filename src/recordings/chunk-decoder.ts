/**
 * Decodes a store's chunks (`bytes` little-endian + `zstd`, docs/conversion.md): native zstd (zstd-napi, the
 * optional dependency the converter also uses) when it loaded, WebAssembly otherwise. Every chunk frame
 * records its content size, so the output is allocated once at its exact length.
 */
import { createRequire } from 'node:module';

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
    // numcodecs' own WebAssembly instance (the decoder zarrita uses). Not @bokuweb/zstd-wasm: initialising that
    // module a second time in a process where the converter compresses with it corrupted the converter's frames.
    const { default: Zstd } = await import('numcodecs/zstd');
    const codec = Zstd.fromConfig({ level: 1 });
    return (frame) => codec.decode(frame) as unknown as Promise<Uint8Array>;
  }
}

/** The decompressed bytes of one chunk object; `expectedBytes` is the chunk's size when the frame omits it. */
export async function decodeChunk(frame: Uint8Array, expectedBytes: number): Promise<Uint8Array> {
  loaded ??= load();
  return (await loaded)(frame, expectedBytes);
}
