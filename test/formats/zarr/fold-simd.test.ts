/**
 * The view pyramid's folds in WebAssembly SIMD: the same minima and maxima as four samples (or columns of the
 * level below) compared one by one, for 16- and 32-bit samples (the extremes of each type included), at any
 * offset, over lengths past its segment of memory and with a tail it leaves to JavaScript; other sample types
 * are left alone.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { foldSimd } from '../../../src/formats/zarr/fold-simd.js';

type IntArray = Int16Array | Int32Array;

/** Minima of each four of `mins` into `out[outMin..]` and maxima of each four of `maxs` into `out[outMax..]`, one by one. */
function foldOneByOne(mins: IntArray, maxs: IntArray, p: number, end: number, out: IntArray, outMin: number, outMax: number): void {
  for (; p < end; p += 4) {
    let lo = mins[p]!;
    let hi = maxs[p]!;
    for (let k = 1; k < 4; k++) {
      lo = Math.min(lo, mins[p + k]!);
      hi = Math.max(hi, maxs[p + k]!);
    }
    out[outMin++] = lo;
    out[outMax++] = hi;
  }
}

/** Samples spread over the whole type, its least and greatest values among them, from a fixed seed. */
function samples(type: typeof Int16Array | typeof Int32Array, length: number, from = 12345): IntArray {
  const out = new type(length);
  let seed = from;
  const bits = type === Int16Array ? 16 : 32;
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    out[i] = i % 97 === 0 ? -(2 ** (bits - 1)) : i % 89 === 0 ? 2 ** (bits - 1) - 1 : (seed << (32 - bits)) >> (32 - bits);
  }
  return out;
}

describe('foldSimd', () => {
  it('is there (Node has WebAssembly SIMD)', () => {
    assert.ok(foldSimd);
  });

  for (const type of [Int16Array, Int32Array]) {
    for (const level of ['samples (level 1)', 'columns of the level below']) {
      it(`gives each four ${type.name} ${level} their least and greatest, the rest left to the caller`, () => {
        for (const count of [0, 4, 12, 16, 32, 36, 4096, 8192, 8196, 20_004, 65_536]) {
          const offset = 8;
          const mins = samples(type, offset + count + 8);
          const maxs = level === 'samples (level 1)' ? mins : samples(type, offset + count + 8, 777);
          const columns = count / 4;
          const simd = new type(2 * columns + 3);
          const expected = new type(2 * columns + 3);
          const stop = foldSimd!(mins, maxs, offset, offset + count, simd, 1, 1 + columns);
          assert.ok(stop >= offset && stop <= offset + count && (stop - offset) % 4 === 0, `stopped at ${stop} of ${count}`);
          assert.ok(offset + count - stop < 32, `left ${offset + count - stop} samples of ${count}`);
          const done = (stop - offset) / 4;
          foldOneByOne(mins, maxs, stop, offset + count, simd, 1 + done, 1 + columns + done);
          foldOneByOne(mins, maxs, offset, offset + count, expected, 1, 1 + columns);
          assert.deepEqual(simd, expected, `${count} samples`);
        }
      });
    }
  }

  it('leaves floating-point samples to the caller', () => {
    const src = new Float32Array(64).fill(1);
    const out = new Float32Array(32);
    assert.equal(foldSimd!(src, src, 0, 64, out, 0, 16), 0);
    assert.ok(out.every((v) => v === 0));
  });
});
