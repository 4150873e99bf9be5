import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as zlib from 'node:zlib';
import { crc32, encodePng } from '../../../src/formats/raster/png-writer.js';
import { decodePng } from '../../mcp/support.js';

describe('encodePng', () => {
  it('writes a PNG that decodes to the same pixels (RGB, alpha dropped)', () => {
    const width = 37;
    const height = 11;
    const pixels = new Uint32Array(width * height);
    for (let i = 0; i < pixels.length; i++) pixels[i] = (0xff000000 | ((i * 2654435761) & 0xffffff)) >>> 0;
    const png = decodePng(encodePng(width, height, pixels));
    assert.deepEqual([png.width, png.height], [width, height]);
    // Little-endian RGBA words (0xAABBGGRR) come back as 0xRRGGBB.
    const expected = Array.from(pixels, (p) => ((p & 0xff) << 16) | (p & 0xff00) | ((p >>> 16) & 0xff));
    assert.deepEqual(Array.from(png.rgb), expected);
  });

  it('computes the CRC-32 PNG chunks carry, as zlib does', { skip: typeof (zlib as { crc32?: unknown }).crc32 !== 'function' ? 'node:zlib has no crc32 before Node 20.15' : false }, () => {
    const bytes = new TextEncoder().encode('IHDR and some data');
    assert.equal(crc32(bytes), (zlib as unknown as { crc32: (b: Uint8Array) => number }).crc32(bytes));
  });

  it('refuses a pixel count that is not width × height', () => {
    assert.throws(() => encodePng(3, 3, new Uint32Array(8)), /8 pixels for 3 × 3/);
  });
});
