/** Reads a whole recording into per-channel arrays (tests only: unbounded memory). */
import type { RecordingReader, SampleArray } from '../../../src/formats/types.js';

export async function readAll(reader: RecordingReader): Promise<number[][]> {
  const out: number[][] = reader.channels.map(() => []);
  for await (const block of reader.blocks()) block.forEach((a: SampleArray, c) => { for (const v of a) out[c]!.push(v); });
  return out;
}

/** physical = digital * scale + offset, the float64 formula of CONTRACT §4. */
export function physical(digital: number, scale: number, offset: number): number {
  return digital * scale + offset;
}
