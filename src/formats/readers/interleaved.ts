/**
 * Splits multiplexed samples (ch1 t1, ch2 t1, ..., sample-major) into one array per channel, in the
 * file's own type. Used by BrainVision MULTIPLEXED data and EEGLAB `.fdt` files.
 */
import type { SampleArray, SampleType } from '../types.js';

export type BinaryType = 'int16' | 'int32' | 'float32' | 'float64';

const bytesPer: Record<BinaryType, number> = { int16: 2, int32: 4, float32: 4, float64: 8 };

export function bytesPerSample(type: BinaryType): number {
  return bytesPer[type];
}

export function allocate(type: SampleType, length: number): SampleArray {
  switch (type) {
    case 'int16':
      return new Int16Array(length);
    case 'int32':
      return new Int32Array(length);
    case 'float32':
      return new Float32Array(length);
    case 'float64':
      return new Float64Array(length);
  }
}

/** A typed view of `bytes` (which must be aligned), after swapping big-endian data in place. */
export function typedView(type: BinaryType, bytes: Uint8Array, bigEndian = false): SampleArray {
  const size = bytesPer[type];
  if (bigEndian) swapBytes(bytes, size);
  const length = Math.floor(bytes.length / size);
  switch (type) {
    case 'int16':
      return new Int16Array(bytes.buffer, bytes.byteOffset, length);
    case 'int32':
      return new Int32Array(bytes.buffer, bytes.byteOffset, length);
    case 'float32':
      return new Float32Array(bytes.buffer, bytes.byteOffset, length);
    case 'float64':
      return new Float64Array(bytes.buffer, bytes.byteOffset, length);
  }
}

export function deinterleave(view: SampleArray, nChannels: number, nSamples: number, outType: SampleType): SampleArray[] {
  const out: SampleArray[] = [];
  for (let c = 0; c < nChannels; c++) {
    const channel = allocate(outType, nSamples);
    for (let t = 0, p = c; t < nSamples; t++, p += nChannels) channel[t] = view[p]!;
    out.push(channel);
  }
  return out;
}

function swapBytes(bytes: Uint8Array, size: number): void {
  for (let i = 0; i + size <= bytes.length; i += size) {
    for (let a = i, b = i + size - 1; a < b; a++, b--) {
      const t = bytes[a]!;
      bytes[a] = bytes[b]!;
      bytes[b] = t;
    }
  }
}
