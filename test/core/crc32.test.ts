/** The CRC-32 both ends of an upload in parts compute: it must be zlib's, whichever implementation runs. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { crc32, crc32Implementation } from '../../src/core/crc32.js';

describe('crc32', () => {
  // A client and a server with different implementations must agree on every part, or every part is refused.
  it("gives zlib's CRC-32, for whole buffers and continued piece by piece", () => {
    const bytes = randomBytes(3 << 20);
    assert.equal(crc32(bytes), zlibCrc32(bytes));
    assert.equal(crc32(new Uint8Array(0)), 0);
    let value = 0;
    for (let at = 0; at < bytes.length; at += 65_537) value = crc32(bytes.subarray(at, at + 65_537), value);
    assert.equal(value, zlibCrc32(bytes));
    // Page-aligned WebAssembly memory, as the folder store stages its direct writes in.
    const staged = new Uint8Array(new WebAssembly.Memory({ initial: 1, maximum: 1 }).buffer);
    staged.set(bytes.subarray(0, staged.length));
    assert.equal(crc32(staged, 7), zlibCrc32(staged, 7));
  });

  // The point of decision 0035: the SIMD build is what runs where npm installs one (Linux x64 here).
  it('uses the native SIMD build on Linux x64', { skip: process.platform !== 'linux' || process.arch !== 'x64' ? 'no build checked on this platform' : false }, () => {
    assert.equal(crc32Implementation(), 'native');
  });
});
