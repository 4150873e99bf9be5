/**
 * 24-bit BDF samples decode to the int32 that Buffer.readIntLE(…, 3) gives, aligned or not, at any count (the
 * JavaScript loops and the WebAssembly SIMD one).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeInt24 } from '../../../src/formats/readers/int24.js';

describe('decodeInt24', () => {
  it('decodes every sample as readIntLE does, from aligned and unaligned starts, for counts around multiples of four', () => {
    const buffer = Buffer.from(randomBytes(3 * 20_100 + 8));
    // Extremes and sign boundaries, so that sign extension is checked on each of the four lanes.
    [0x7fffff, 0x800000, 0xffffff, 0, 1, 0x800001, 0x7ffffe, 0xff0000].forEach((v, i) => buffer.writeUIntLE(v, 3 * i, 3));
    for (const start of [0, 1, 2, 3, 4, 5, 8, 12]) {
      // Past 63 samples the WebAssembly SIMD path, past 8,192 more than one of its segments.
      for (const count of [0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 64, 65, 67, 1000, 1001, 1003, 8192, 8195, 20_001]) {
        const out = new Int32Array(count + 2).fill(-7);
        decodeInt24(buffer, start, count, out, 1);
        const expected = Array.from({ length: count }, (_, i) => buffer.readIntLE(start + 3 * i, 3));
        assert.deepEqual([...out.subarray(1, count + 1)], expected, `start ${start}, count ${count}`);
        assert.equal(out[0], -7);
        assert.equal(out[count + 1], -7, 'nothing is written past the count');
      }
    }
  });

  it('reads from a view that starts inside its buffer', () => {
    const whole = Buffer.from(randomBytes(64 * 3 + 7));
    const view = new Uint8Array(whole.buffer, whole.byteOffset + 4, 64 * 3);
    const out = new Int32Array(64);
    decodeInt24(view, 0, 64, out, 0);
    assert.deepEqual([...out], Array.from({ length: 64 }, (_, i) => whole.readIntLE(4 + 3 * i, 3)));
  });
});
