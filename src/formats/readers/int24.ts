/**
 * Decodes little-endian 24-bit two's-complement samples (BDF) into int32. A tight loop: this is the hot path.
 * Like the int16 path, it relies on a little-endian host (typed arrays use the host's byte order).
 */
export function decodeInt24(bytes: Uint8Array, start: number, count: number, out: Int32Array, outStart: number): void {
  const at = bytes.byteOffset + start;
  let done = 0;
  if ((at & 3) === 0) {
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
    done = quads * 4;
  }
  for (let i = outStart + done, p = start + done * 3, end = outStart + count; i < end; i++, p += 3) {
    out[i] = ((bytes[p]! << 8) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 24)) >> 8;
  }
}
