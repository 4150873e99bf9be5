/**
 * zarrita's `zstd` codec for the browser, decoding with fzstd (Zstandard in plain JavaScript). numcodecs'
 * codec is WebAssembly whose emscripten bindings build functions with `Function`, which a page may run only
 * under `script-src 'unsafe-eval'`; this one evaluates nothing, so the viewer's pages drop it (decision 0022).
 * The viewer only reads: encoding is not offered.
 */
import { decompress } from 'fzstd';

export class ZstdCodec {
  readonly kind = 'bytes_to_bytes';

  static fromConfig(_config: unknown): ZstdCodec {
    return new ZstdCodec();
  }

  encode(_bytes: Uint8Array): never {
    throw new Error('zstd: the viewer decodes only');
  }

  decode(bytes: Uint8Array): Uint8Array {
    return decompress(bytes);
  }
}
