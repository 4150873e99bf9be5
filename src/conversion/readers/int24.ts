/** Decodes little-endian 24-bit two's-complement samples (BDF) into int32. A tight loop: this is the hot path. */
export function decodeInt24(bytes: Uint8Array, start: number, count: number, out: Int32Array, outStart: number): void {
  let p = start;
  const end = outStart + count;
  for (let i = outStart; i < end; i++, p += 3) {
    // Shift the 3 bytes to the top of an int32 and back: sign extension for free.
    out[i] = ((bytes[p]! << 8) | (bytes[p + 1]! << 16) | (bytes[p + 2]! << 24)) >> 8;
  }
}
