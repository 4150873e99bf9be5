/**
 * A PNG writer for an RGBA image held as little-endian 32-bit words (`0xAABBGGRR`, as a canvas' ImageData
 * reads through a Uint32Array): 8-bit RGB, each row filtered by `Sub` (PNG, W3C 2003, section 9.2: good for flat areas and
 * vertical strokes), deflated by node:zlib. Opaque images only: alpha is dropped.
 */
import { deflateSync } from 'node:zlib';

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 of the PNG spec (Annex D) over `bytes`. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/** The PNG file of a `width` × `height` image, row after row in `pixels`. */
export function encodePng(width: number, height: number, pixels: Uint32Array): Uint8Array {
  if (pixels.length !== width * height) throw new Error(`encodePng: ${pixels.length} pixels for ${width} × ${height}`);
  const stride = 1 + width * 3;
  const raw = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const at = y * stride;
    raw[at] = 1; // filter type Sub: each byte minus the same channel of the pixel to its left
    let pr = 0;
    let pg = 0;
    let pb = 0;
    for (let x = 0; x < width; x++) {
      const p = pixels[y * width + x]!;
      const r = p & 0xff;
      const g = (p >>> 8) & 0xff;
      const b = (p >>> 16) & 0xff;
      const o = at + 1 + x * 3;
      raw[o] = (r - pr) & 0xff;
      raw[o + 1] = (g - pg) & 0xff;
      raw[o + 2] = (b - pb) & 0xff;
      pr = r;
      pg = g;
      pb = b;
    }
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, adaptive filtering, no interlace
  const parts = [SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 6 })), chunk('IEND', new Uint8Array(0))];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
