/**
 * The view pyramid's level 1 in WebAssembly SIMD: the same minima and maxima as four samples compared one by
 * one, for 16- and 32-bit samples (the extremes of each type included), at any offset, over lengths past its
 * segment of memory and with a tail it leaves to JavaScript; other sample types are left alone.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { foldSamplesSimd } from '../../../src/formats/zarr/fold-samples-simd.js';

type IntArray = Int16Array | Int32Array;

/** Minima into `out[outMin..]` and maxima into `out[outMax..]` of each four samples of [p, end), one by one. */
function foldOneByOne(src: IntArray, p: number, end: number, out: IntArray, outMin: number, outMax: number): void {
  for (; p < end; p += 4) {
    let lo = src[p]!;
    let hi = src[p]!;
    for (let k = 1; k < 4; k++) {
      lo = Math.min(lo, src[p + k]!);
      hi = Math.max(hi, src[p + k]!);
    }
    out[outMin++] = lo;
    out[outMax++] = hi;
  }
}

/** Samples spread over the whole type, its least and greatest values among them, from a fixed seed. */
function samples(type: typeof Int16Array | typeof Int32Array, length: number): IntArray {
  const out = new type(length);
  let seed = 12345;
  const bits = type === Int16Array ? 16 : 32;
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out[i] = i % 97 === 0 ? -(2 ** (bits - 1)) : i % 89 === 0 ? 2 ** (bits - 1) - 1 : (seed << (32 - bits)) >> (32 - bits);
  }
  return out;
}

describe('foldSamplesSimd', () => {
  it('is there (Node has WebAssembly SIMD)', () => {
    assert.ok(foldSamplesSimd);
  });

  for (const type of [Int16Array, Int32Array]) {
    it(`gives each four ${type.name} samples' least and greatest, the rest left to the caller`, () => {
      for (const count of [0, 4, 12, 16, 32, 36, 4096, 8192, 8196, 20_004, 65_536]) {
        const offset = 8;
        const src = samples(type, offset + count + 8);
        const columns = count / 4;
        const simd = new type(2 * columns + 3);
        const expected = new type(2 * columns + 3);
        const stop = foldSamplesSimd!(src, offset, offset + count, simd, 1, 1 + columns);
        assert.ok(stop >= offset && stop <= offset + count && (stop - offset) % 4 === 0, `stopped at ${stop} of ${count}`);
        assert.ok(offset + count - stop < 32, `left ${offset + count - stop} samples of ${count}`);
        const done = (stop - offset) / 4;
        foldOneByOne(src, stop, offset + count, simd, 1 + done, 1 + columns + done);
        foldOneByOne(src, offset, offset + count, expected, 1, 1 + columns);
        assert.deepEqual(simd, expected, `${count} samples`);
      }
    });
  }

  it('leaves floating-point samples to the caller', () => {
    const src = new Float32Array(64).fill(1);
    const out = new Float32Array(32);
    assert.equal(foldSamplesSimd!(src, 0, 64, out, 0, 16), 0);
    assert.ok(out.every((v) => v === 0));
  });
});
