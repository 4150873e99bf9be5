/**
 * Decodes little-endian 24-bit two's-complement samples (BDF) into int32. A tight loop: this is the hot path.
 * Like the int16 path, it relies on a little-endian host (typed arrays use the host's byte order).
 * Runs of 64 samples and more go through WebAssembly SIMD (`simd-module.ts`): each 12 bytes spread into the
 * top three bytes of four int32 lanes by one swizzle, then shifted down arithmetically (sign extension), about
 * a quarter of the JavaScript loop's time with the copies in and out of the module's memory.
 */
import { addToLocal, instantiateSimd, localGet as get, localSet as set } from '../simd-module.js';

/** Samples decoded in the module at a time: their bytes, four spare, and their int32s fit its 64 KiB page. */
const SEGMENT = 8192;
const OUT = SEGMENT * 3 + 16;
/** Shorter runs are left to JavaScript: the copies and the call cost more than they save. */
const SIMD_FROM = 64;

/** `(src, n, dst)`: n (a multiple of 4) samples of 3 bytes at byte offset src, as int32 from byte offset dst. */
const decodeBody = (() => {
  const spread = [0x80, 0, 1, 2, 0x80, 3, 4, 5, 0x80, 6, 7, 8, 0x80, 9, 10, 11];
  return [
    0x01, 0x01, 0x7f, // locals: 1 i32 (3: the end of dst)
    ...get(2), ...get(1), 0x41, 0x02, 0x74, 0x6a, ...set(3),
    0x02, 0x40, 0x03, 0x40, // block, loop
    ...get(2), ...get(3), 0x4f, 0x0d, 0x01, // dst >= end: out
    ...get(2),
    ...get(0), 0xfd, 0x00, 0x00, 0x00, // v128.load src (16 bytes, 12 used)
    0xfd, 0x0c, ...spread, 0xfd, 0x0e, // i8x16.swizzle (index 0x80: a zero byte)
    0x41, 0x08, 0xfd, 0xac, 0x01, // i32x4.shr_s 8
    0xfd, 0x0b, 0x00, 0x00, // v128.store dst
    ...addToLocal(0, 12), ...addToLocal(2, 16),
    0x0c, 0x00, 0x0b, 0x0b, // br loop, end loop, end block
    0x0b,
  ];
})();

const simd = (() => {
  const exports = instantiateSimd([{ name: 'd24', params: 3, body: decodeBody }]);
  if (!exports) return undefined;
  const memory = (exports['m'] as WebAssembly.Memory).buffer;
  return { decode: exports['d24'] as (src: number, n: number, dst: number) => void, bytes: new Uint8Array(memory), ints: new Int32Array(memory) };
})();

export function decodeInt24(bytes: Uint8Array, start: number, count: number, out: Int32Array, outStart: number): void {
  let done = 0;
  if (simd && count >= SIMD_FROM) {
    const whole = count & ~3;
    while (done < whole) {
      const n = Math.min(SEGMENT, whole - done);
      simd.bytes.set(bytes.subarray(start + done * 3, start + (done + n) * 3), 0);
      simd.decode(0, n, OUT);
      out.set(simd.ints.subarray(OUT / 4, OUT / 4 + n), outStart + done);
      done += n;
    }
  } else {
    done = decodeQuads(bytes, start, count, out, outStart);
  }
  for (let i = outStart + done, p = start + done * 3, end = outStart + count; i < end; i++, p += 3) {
    out[i] = ((bytes[p]! << 8) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 24)) >> 8;
  }
}

/** Four samples at a time from three aligned 32-bit loads, where the bytes are aligned; returns the samples done. */
function decodeQuads(bytes: Uint8Array, start: number, count: number, out: Int32Array, outStart: number): number {
  const at = bytes.byteOffset + start;
  if ((at & 3) !== 0) return 0;
  // Four samples from three aligned 32-bit loads: half the time of twelve byte loads.
  const words = new Uint32Array(bytes.buffer, at, (count * 3) >> 2);
  const quads = count >> 2;
  for (let q = 0, k = 0, i = outStart; q < quads; q++, k += 3, i += 4) {
    const w0 = words[k]!;
    const w1 = words[k + 1]!;
    const w2 = words[k + 2]!;
    // Each sample is moved to the top of an int32 and shifted back down: sign extension for free.
    out[i] = (w0 << 8) >> 8;
    out[i + 1] = ((w0 >>> 24) | (w1 << 8)) << 8 >> 8;
    out[i + 2] = ((w1 >>> 16) | (w2 << 16)) << 8 >> 8;
    out[i + 3] = w2 >> 8;
  }
  return quads * 4;
}
