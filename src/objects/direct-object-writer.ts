/**
 * Small objects of the folder store (a conversion's chunks: tens of kilobytes to under a megabyte, a hundred
 * or more a recording) written past the page cache on two writer threads (decision 0044). The caller's bytes are
 * copied into a slot of page-aligned shared memory and a thread makes the file with `O_DIRECT` (open, write,
 * cut back to the length, stat, close, rename), one message a file, while the caller goes on encoding.
 *
 * Why: a write into the page cache needs new pages, and on this project's VM the host backs a page the guest
 * touches anew for about 8 µs: 2.6 s of system time a GiB in a worker's usual state, half of its CPU. Written
 * directly, the same objects cost a third of that or less, and on the thread the waits for the disk overlap the
 * encoding of the next chunks. A chunk written once and read again from the disk by the gateway loses little.
 * A filesystem that refuses `O_DIRECT` (tmpfs before Linux 6.6) makes every later write go the ordinary way.
 */
import { constants } from 'node:fs';
import { PAGE } from './aligned-buffers.js';
import { ThreadRequests, type ThreadAnswer } from './thread-requests.js';

/** Objects from this size on go through the thread; smaller ones (metadata) are not worth a message. */
export const DIRECT_OBJECT_MIN = 64 << 10;
/** The largest object the thread takes: one slot. */
const SLOT_BYTES = 1 << 20;
/** Writes in flight: a conversion keeps 8 puts going (formats/zarr/put-queue.ts). */
const SLOTS = 8;
/**
 * Threads, each writing the slots of its residue: a thread waits for the disk on each write, and with two
 * workers on one disk one write at a time left the workers waiting for slots.
 */
const THREADS = 2;

/** What a written file's status says: the folder store's `ObjectInfo` is made from it. */
export interface WrittenObject {
  size: number;
  mtimeMs: number;
  ino: number;
}

/** The thread, as CommonJS source evaluated in it (no file to resolve, under tsx or a bundle alike). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { constants, openSync, writeSync, ftruncateSync, fstatSync, closeSync, renameSync, unlinkSync, mkdirSync } = require('node:fs');
const path = require('node:path');
const memory = new Uint8Array(workerData.memory.buffer);
const FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT;
const removed = (file) => { try { unlinkSync(file); } catch {} };
function openNew(tmp) {
  try {
    return openSync(tmp, FLAGS, 0o666);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
    mkdirSync(path.dirname(tmp), { recursive: true });
    return openSync(tmp, FLAGS, 0o666);
  }
}
parentPort.on('message', (m) => {
  let fd;
  // Only a temporary file this write made is removed on a failure: one that was there before is someone else's.
  let made = false;
  try {
    try {
      fd = openNew(m.tmp);
    } catch (err) {
      // Linux creates the file before it checks the flag.
      if (err.code === 'EINVAL') {
        removed(m.tmp);
        parentPort.postMessage({ seq: m.seq, refused: true });
        return;
      }
      throw err;
    }
    made = true;
    const bytes = memory.subarray(m.offset, m.offset + m.padded);
    for (let done = 0; done < m.padded; ) done += writeSync(fd, bytes, done, m.padded - done, done);
    if (m.padded !== m.length) ftruncateSync(fd, m.length);
    const s = fstatSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(m.tmp, m.file);
    parentPort.postMessage({ seq: m.seq, size: s.size, mtimeMs: s.mtimeMs, ino: s.ino });
  } catch (err) {
    if (fd !== undefined) try { closeSync(fd); } catch {}
    if (made) removed(m.tmp);
    parentPort.postMessage({ seq: m.seq, error: String((err && err.message) || err), code: err && err.code });
  }
});
`;

type WriteAnswer = ThreadAnswer & Partial<WrittenObject> & { refused?: boolean };

export class DirectObjectWriter {
  /** The slots, shared with the threads: made with the first thread, kept until `close()`. */
  #memory: WebAssembly.Memory | undefined;
  /** Slot `i` is written by thread `i % THREADS`. */
  readonly #threads = Array.from({ length: THREADS }, () => new ThreadRequests<WriteAnswer>(WORKER_SOURCE, 'object writing', () => ({ memory: this.#sharedMemory() })));
  /** Set once the filesystem refused `O_DIRECT`, or the platform has none: every write is then the caller's. */
  #refused = constants.O_DIRECT === undefined;
  readonly #free: number[] = Array.from({ length: SLOTS }, (_, i) => i);
  readonly #waitingForSlot: Array<() => void> = [];

  /** Whether `write` may take an object of `length` bytes. */
  takes(length: number): boolean {
    return !this.#refused && length >= DIRECT_OBJECT_MIN && length <= SLOT_BYTES;
  }

  /**
   * Writes `bytes` into the new file `tmp` (its folder made if missing) and renames it to `file`: the file's
   * status, or undefined when the filesystem refused `O_DIRECT` (nothing was written; the caller writes it
   * the ordinary way, as it will every later object). On a failure `file` is untouched and a `tmp` this write
   * made is gone (one that was there before is left alone).
   */
  async write(bytes: Uint8Array, tmp: string, file: string): Promise<WrittenObject | undefined> {
    if (!this.takes(bytes.length)) return undefined;
    const slot = await this.#slot();
    try {
      const offset = slot * SLOT_BYTES;
      const padded = Math.ceil(bytes.length / PAGE) * PAGE;
      const view = new Uint8Array(this.#sharedMemory().buffer, offset, SLOT_BYTES);
      view.set(bytes);
      view.fill(0, bytes.length, padded);
      const answer = await this.#threads[slot % THREADS]!.ask({ offset, length: bytes.length, padded, tmp, file });
      if (answer.refused) {
        this.#refused = true;
        return undefined;
      }
      return { size: answer.size!, mtimeMs: answer.mtimeMs!, ino: answer.ino! };
    } finally {
      this.#release(slot);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#threads.map((t) => t.close()));
    this.#memory = undefined;
  }

  #sharedMemory(): WebAssembly.Memory {
    const pages = (SLOT_BYTES * SLOTS) / 65536;
    // Shared, so the threads read the slots the caller filled; page-aligned, as O_DIRECT wants (aligned-buffers.ts).
    return (this.#memory ??= new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true }));
  }

  async #slot(): Promise<number> {
    while (this.#free.length === 0) await new Promise<void>((resolve) => this.#waitingForSlot.push(resolve));
    return this.#free.pop()!;
  }

  #release(slot: number): void {
    this.#free.push(slot);
    this.#waitingForSlot.shift()?.();
  }
}
