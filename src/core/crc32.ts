/**
 * CRC-32 (IEEE, zlib's), the check of each part of an upload in parts to the folder store (decisions 0032, 0035),
 * computed on both ends of every part: by `nds datasets upload` and by the server as the part arrives.
 * `@node-rs/crc32` folds with the CPU's carry-less multiply (PCLMULQDQ, ARMv8 CRC): 0.06 s of CPU a GiB on this
 * project's machine against zlib's 0.27-0.30 s (`node:zlib` `crc32` has no SIMD path). It is a native package
 * with a build per platform; where none installs or loads, `node:zlib`'s gives the same values.
 */
import { createRequire } from 'node:module';
import { crc32 as zlibCrc32 } from 'node:zlib';

type Crc32 = (bytes: Uint8Array, value?: number) => number;

let chosen: Crc32 | undefined;

/** The faster CRC-32 when its native build loads here, else zlib's; decided on the first call. */
function implementation(): Crc32 {
  if (chosen) return chosen;
  try {
    const native = (createRequire(import.meta.url)('@node-rs/crc32') as { crc32: Crc32 }).crc32;
    // A build that loads but disagrees with zlib is not used (the value is checked by the other end).
    chosen = native(Buffer.from('123456789')) === 0xcbf43926 ? native : zlibCrc32;
  } catch {
    chosen = zlibCrc32;
  }
  return chosen;
}

/** The CRC-32 of `bytes` continuing from `value` (0 for the first bytes), as `zlib.crc32` computes it. */
export function crc32(bytes: Uint8Array, value = 0): number {
  return implementation()(bytes, value);
}

/** Which implementation `crc32` uses here: `native` (`@node-rs/crc32`) or `zlib`. */
export function crc32Implementation(): 'native' | 'zlib' {
  return implementation() === zlibCrc32 ? 'zlib' : 'native';
}
