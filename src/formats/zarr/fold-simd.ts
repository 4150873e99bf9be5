/**
 * The view pyramid's hot loop, the least and the greatest of each four samples (level 1 from level 0; and of
 * each four columns' minima and maxima above it), in
 * WebAssembly SIMD for 16- and 32-bit integer samples: four vectors of samples in, one vector of minima and
 * one of maxima out, through two rounds of even/odd lane shuffles. In JavaScript this loop was 16 % of the
 * converter's CPU time on EDF, about 1.3 times zstd's Huffman coding (`perf record`, issue 24 item 4); here a
 * third of that. Minima and maxima are exact: the chunks are the same bytes either way
 * (test/formats/zarr/fold-simd.test.ts compares them with the JavaScript loop).
 *
 * The functions are written out below (`simd-module.ts` assembles them): one per sample width, each
 * `(src, n, dstMin, dstMax)` over byte offsets into its own one-page memory, `n` a multiple of the samples of
 * four vectors. Where WebAssembly SIMD is missing, `foldSimd` is undefined and the caller loops in
 * JavaScript.
 */
import type { SampleArray } from '../types.js';
import { addToLocal, instantiateSimd, localGet as get, localSet as set } from '../simd-module.js';

/** Samples copied into the module's memory at a time (a multiple of 32); with the outputs, under one 64 KiB page. */
const SEGMENT = 8192;
const OUT_MIN = SEGMENT * 4;
const OUT_MAX = OUT_MIN + (SEGMENT / 4) * 4;

const EVEN_16 = [0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29];
const ODD_16 = [2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31];
const EVEN_32 = [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27];
const ODD_32 = [4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31];

/** The body of one fold function: `shift` is log2 of the sample's bytes; `min`, `max` the lanes' opcodes. */
function foldBody(shift: number, even: number[], odd: number[], min: number[], max: number[]): number[] {
  const shuffle = (a: number, b: number, lanes: number[]) => [...get(a), ...get(b), 0xfd, 0x0d, ...lanes];
  const load = (offset: number, into: number) => [...get(0), 0xfd, 0x00, 0x00, offset, ...set(into)];
  // Params 0 src, 1 n, 2 dstMin, 3 dstMax; locals 4 end (i32), 5-8 four vectors of samples, 9-10 the first round.
  const reduce = (op: number[], dst: number) => [
    ...shuffle(5, 6, even), ...shuffle(5, 6, odd), 0xfd, ...op, ...set(9),
    ...shuffle(7, 8, even), ...shuffle(7, 8, odd), 0xfd, ...op, ...set(10),
    ...get(dst), ...shuffle(9, 10, even), ...shuffle(9, 10, odd), 0xfd, ...op, 0xfd, 0x0b, 0x00, 0x00,
  ];
  const code = [
    0x02, 0x01, 0x7f, 0x06, 0x7b, // locals: 1 i32, 6 v128
    ...get(0), ...get(1), 0x41, shift, 0x74, 0x6a, ...set(4),
    0x02, 0x40, 0x03, 0x40, // block, loop
    ...get(0), ...get(4), 0x4f, 0x0d, 0x01, // src >= end: out
    ...load(0, 5), ...load(16, 6), ...load(32, 7), ...load(48, 8),
    ...reduce(min, 2),
    ...reduce(max, 3),
    ...addToLocal(0, 64), ...addToLocal(2, 16), ...addToLocal(3, 16),
    0x0c, 0x00, 0x0b, 0x0b, // br loop, end loop, end block
    0x0b,
  ];
  return code;
}

type Fold = (src: number, n: number, dstMin: number, dstMax: number) => void;

/** Folds [p, end) of `mins` (minima) and of `maxs` (maxima; the same array for samples); see `foldSimd`. */
type SimdFold = (mins: SampleArray, maxs: SampleArray, p: number, end: number, out: SampleArray, outMin: number, outMax: number) => number;

function instantiate(): SimdFold | undefined {
  const exports = instantiateSimd([
    { name: 'f16', params: 4, body: foldBody(1, EVEN_16, ODD_16, [0x96, 0x01], [0x98, 0x01]) },
    { name: 'f32', params: 4, body: foldBody(2, EVEN_32, ODD_32, [0xb6, 0x01], [0xb8, 0x01]) },
  ]);
  if (!exports) return undefined;
  const memory = (exports['m'] as WebAssembly.Memory).buffer;
  const widths = [
    { type: Int16Array, fold: exports['f16'] as Fold, per: 32, view: new Int16Array(memory) },
    { type: Int32Array, fold: exports['f32'] as Fold, per: 16, view: new Int32Array(memory) },
  ];
  return (mins, maxs, p, end, out, outMin, outMax) => {
    const width = widths.find((w) => mins instanceof w.type && maxs instanceof w.type && out instanceof w.type);
    if (!width) return p;
    const { fold, per, view } = width;
    const minAt = OUT_MIN / view.BYTES_PER_ELEMENT;
    const maxAt = OUT_MAX / view.BYTES_PER_ELEMENT;
    const bulkEnd = p + Math.floor((end - p) / per) * per;
    while (p < bulkEnd) {
      const n = Math.min(SEGMENT, bulkEnd - p);
      view.set(mins.subarray(p, p + n) as never, 0);
      fold(0, n, OUT_MIN, OUT_MAX);
      out.set(view.subarray(minAt, minAt + n / 4) as never, outMin);
      if (maxs !== mins) {
        // A level above 1: the maxima come from their own plane, folded the same way (its minima unused).
        view.set(maxs.subarray(p, p + n) as never, 0);
        fold(0, n, OUT_MIN, OUT_MAX);
      }
      out.set(view.subarray(maxAt, maxAt + n / 4) as never, outMax);
      p += n;
      outMin += n / 4;
      outMax += n / 4;
    }
    return p;
  };
}

/**
 * Folds [p, end) (`end - p` a multiple of 4) four into one: the least of each four of `mins` from
 * `out[outMin]` on, the greatest of each four of `maxs` from `out[outMax]` on (`mins` and `maxs` are one array
 * of samples at level 1, the planes of the level below above it), as far as whole vectors go; returns where it
 * stopped (the caller folds the rest). Returns `p` (nothing done) for types other than 16- and 32-bit integers.
 */
export const foldSimd = instantiate();
