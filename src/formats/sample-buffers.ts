/**
 * Arrays a conversion lends from one pool and gives back when its recording is done: a reader's batch buffers,
 * its per-channel arrays, the writer's chunk and view buffers. Fresh, they were about 14 MB a recording,
 * zeroed and page-faulted in; and in a worker, whose heap holds the whole service, the external memory they
 * added asked V8 for a full mark-compact about once a recording (bench/RESULTS.md). Contents of a lent array
 * are whatever its last borrower left: the borrower writes before it reads.
 */
import { BufferPool } from '../core/buffer-pool.js';
import { bytesPerSample, typedView } from './readers/interleaved.js';
import type { SampleArray, SampleType } from './types.js';

/** Enough for the buffers of one recording of up to a few hundred channels, of each power-of-two size. */
const pool = new BufferPool(16);

/** `bytes` bytes, lent until `giveBack`. */
export function lendBytes(bytes: number): Uint8Array {
  return pool.take(bytes).subarray(0, bytes);
}

/** `length` samples of `type`, lent until `giveBack`. */
export function lendSamples(type: SampleType, length: number): SampleArray {
  return typedView(type, lendBytes(length * bytesPerSample(type)));
}

/** Hands back an array from `lendBytes` or `lendSamples` (any view of it); the caller must not use it afterwards. */
export function giveBack(array: ArrayBufferView): void {
  pool.give(array);
}
