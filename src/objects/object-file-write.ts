/**
 * Writing one object of the folder store to its (temporary) file from a stream of chunks, hashing on the way.
 *
 * Large objects (uploaded content) are staged in page-aligned memory and written with `O_DIRECT`, past the page
 * cache: copying a gigabyte into fresh page-cache pages cost this VM 1.5–2.3 s of system time, and `sync`
 * another 0.35 s, against 0.1 s for the same gigabyte written directly in 1 MiB pieces (bench/RESULTS.md).
 * Write-once content read back once by a conversion has no use for the cache either; object stores such as
 * MinIO write the same way. Small objects go through the page cache (a conversion's chunks of 64 KiB and more
 * are written directly on a thread of their own, objects/direct-object-writer.ts), and so does everything on a
 * filesystem that refuses `O_DIRECT`.
 */
import { closeSync, constants, fstatSync, openSync, writeSync, type Stats } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from '../core/crc32.js';
import { BufferPool } from '../core/buffer-pool.js';
import { AlignedBufferPool, PAGE } from './aligned-buffers.js';
import { ContentMismatchError, type PutOptions } from './object-store.js';

const STAGE_BYTES = 1 << 20;
/** Objects of at least this declared size are large: staged in aligned buffers and written directly. */
export const LARGE_OBJECT = STAGE_BYTES;

/**
 * Staging buffers of a large object. A direct write of 1 MiB took 7 ms (median; p90 13–16 ms) in an upload of
 * eight objects at once, most of it waiting for an I/O thread; with two buffers each object's socket stalled
 * for that (3.8 s summed over the objects of a 1 GiB upload), with four it does not.
 */
const DIRECT_STAGES = 4;
/** 16 large objects at a time take aligned buffers; more at once fall back to ordinary ones. */
const alignedStages = new AlignedBufferPool(STAGE_BYTES, { maxBuffers: 64 });
const stages = new BufferPool(16);

export interface WrittenFile {
  size: number;
  sha256: string | undefined;
  /** Hex CRC-32 of the bytes, when `crc32` was asked for (and `sha256` was not). */
  crc32?: string;
  /** Whether the file was written with `O_DIRECT`. */
  direct: boolean;
  /** Whether `O_DIRECT` was asked for and the filesystem refused it: the caller stops asking. */
  directRefused: boolean;
}

interface Stage {
  out: FileHandle;
  buffers: Uint8Array[];
  direct: boolean;
  directRefused: boolean;
  release(): void;
}

/**
 * Writes `source` to the new file `file` through a ring of staging buffers: one fills (and is hashed) while the
 * ones before it are written out, one write at a time and in order. Socket chunks are copied out at once, so
 * they die young; queued in a write stream while the disk was slow, they lived long enough to cost a full
 * garbage collection every few dozen megabytes. Stops at the first byte past `contentLength`, before it
 * reaches the disk.
 */
export async function writeObjectFile(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, file: string, options: PutOptions, tryDirect: boolean): Promise<WrittenFile> {
  const stage = await openStage(file, options.contentLength, tryDirect);
  try {
    const staged = await writeStaged(source, stage, 0, options);
    // A direct write ends on a whole page; the file is cut back to the bytes that came.
    if (stage.direct && staged.size % PAGE !== 0) await stage.out.truncate(staged.size);
    return { ...staged, direct: stage.direct, directRefused: stage.directRefused };
  } finally {
    await stage.out.close();
    stage.release();
  }
}

/**
 * Refuses (`ContentMismatchError`) a written file whose size, SHA-256, or (asked for without a SHA-256) CRC-32 is
 * not what `expected` promised: the one check of both the folder store's objects and its parts.
 */
export function checkWritten(expected: PutOptions, written: Pick<WrittenFile, 'size' | 'sha256' | 'crc32'>): void {
  if (expected.contentLength !== undefined && written.size !== expected.contentLength) throw new ContentMismatchError({ size: expected.contentLength }, { size: written.size });
  if (expected.sha256 && written.sha256 !== expected.sha256.toLowerCase()) throw new ContentMismatchError({ sha256: expected.sha256 }, { size: written.size, sha256: written.sha256 });
  if (!expected.sha256 && expected.crc32 && written.crc32 !== expected.crc32.toLowerCase()) throw new ContentMismatchError({ crc32: expected.crc32 }, { size: written.size, crc32: written.crc32 });
}

/**
 * Writes `bytes`, a small object held whole in memory (under `LARGE_OBJECT`), to the new file `file` in one
 * synchronous write from the caller's array (no staging copy), and returns the file's status (taken before
 * the close: a rename keeps it). Synchronous, on the calling thread: each call through the thread pool cost a
 * conversion's chunk several futex calls and two context switches, and the open, write, close, rename and
 * stat of the asynchronous path cost 0.3 ms of CPU a chunk more than the same calls made here (decision 0041).
 * A missing folder is an `ENOENT` error before anything is created: the caller makes it and tries again, so
 * the common case costs no `mkdir`.
 */
export function writeSmallObjectFile(bytes: Uint8Array, file: string): Stats {
  const out = openSync(file, 'wx');
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(out, bytes, done, bytes.length - done, done);
    return fstatSync(out);
  } finally {
    closeSync(out);
  }
}

/**
 * Writes `source` into the existing file `file` from byte `offset` on (a multiple of 1 MiB), the same way as
 * `writeObjectFile`; bytes outside the range are left as they are. A direct write of a length that is not a
 * whole page writes zeros past the range's end up to the page's end: with `endOfFile`, the file is cut back to
 * that length afterwards (the range is the file's last). A missing file is an `ENOENT` error, never created.
 */
export async function writeObjectRange(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  file: string,
  offset: number,
  options: PutOptions & { endOfFile?: number },
  tryDirect: boolean,
): Promise<WrittenFile> {
  const aligned = tryDirect && constants.O_DIRECT !== undefined ? alignedStages.take(DIRECT_STAGES) : undefined;
  let out: FileHandle | undefined;
  let direct = false;
  let directRefused = false;
  if (aligned) {
    try {
      out = await open(file, constants.O_WRONLY | constants.O_DIRECT);
      direct = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EINVAL') {
        alignedStages.give(aligned);
        throw err;
      }
      directRefused = true;
    }
  }
  const buffers = direct ? aligned! : [stages.take(STAGE_BYTES), stages.take(STAGE_BYTES)];
  if (aligned && !direct) alignedStages.give(aligned);
  const release = () => (direct ? alignedStages.give(buffers) : buffers.forEach((b) => stages.give(b)));
  try {
    out ??= await open(file, constants.O_WRONLY);
    const staged = await writeStaged(source, { out, buffers, direct, directRefused, release }, offset, options);
    return { ...staged, direct, directRefused };
  } finally {
    if (out) {
      if (direct && options.endOfFile !== undefined) await out.truncate(options.endOfFile).catch(() => undefined);
      await out.close();
    }
    release();
  }
}

/**
 * The staging loop of both writes: hashes each filled buffer (SHA-256 when `options.sha256` is given, else
 * CRC-32 when `options.crc32` is: a third of the CPU, for parts whose whole file is hashed anyway) and queues it.
 */
async function writeStaged(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, stage: Stage, offset: number, options: PutOptions): Promise<{ size: number; sha256: string | undefined; crc32?: string }> {
  const limit = options.contentLength;
  const { out, buffers, direct } = stage;
  const hash = options.sha256 ? createHash('sha256') : undefined;
  const withCrc = !hash && options.crc32 !== undefined;
  let crc = 0;
  let current = 0;
  let fill = 0;
  let size = 0;
  let position = offset;
  // Writes go out one at a time, in order; filling goes on into the next free buffer meanwhile.
  let written: Promise<void> = Promise.resolve();
  const pending: Array<Promise<void> | undefined> = buffers.map(() => undefined);
  const busy: boolean[] = buffers.map(() => false);
  /** Hashes the filled buffer and queues its write; the write the next buffer waits for, if it is still under way. */
  const flush = (): Promise<void> | undefined => {
    const index = current;
    const buffer = buffers[index];
    const length = fill;
    const at = position;
    if (hash) hash.update(buffer.subarray(0, length));
    else if (withCrc) crc = crc32(buffer.subarray(0, length), crc);
    written = written.then(() => (direct ? writeDirect(out, buffer, length, at) : writePieces(out, buffer.subarray(0, length), at)));
    busy[index] = true;
    const mine = written;
    mine.then(
      () => {
        if (pending[index] === mine) busy[index] = false;
      },
      () => undefined,
    );
    pending[index] = mine;
    position += length;
    current = (current + 1) % buffers.length;
    fill = 0;
    return busy[current] ? pending[current] : undefined;
  };
  /** Stages `chunk` from byte `at` on; a promise only when it had to wait for a buffer, settled once the chunk is all staged. */
  const stageFrom = (chunk: Uint8Array, at: number): Promise<void> | undefined => {
    while (at < chunk.length) {
      const n = Math.min(chunk.length - at, STAGE_BYTES - fill);
      buffers[current].set(at === 0 && n === chunk.length ? chunk : chunk.subarray(at, at + n), fill);
      fill += n;
      at += n;
      if (fill === STAGE_BYTES) {
        const wait = flush();
        if (wait) {
          const rest = at;
          return wait.then(() => stageFrom(chunk, rest));
        }
      }
    }
    return undefined;
  };
  const take = (chunk: Uint8Array): Promise<void> | undefined => {
    size += chunk.length;
    if (limit !== undefined && size > limit) throw new ContentMismatchError({ size: limit }, { size });
    return stageFrom(chunk, 0);
  };
  try {
    if (source instanceof Readable) await drain(source, take);
    else {
      for await (const chunk of source) {
        const wait = take(chunk);
        if (wait) await wait;
      }
    }
    if (fill > 0) flush();
    await written;
    return { size, sha256: hash?.digest('hex'), ...(withCrc ? { crc32: crc.toString(16).padStart(8, '0') } : {}) };
  } finally {
    // A write still in flight after a failure must end before its buffer goes back to the pool.
    await written.catch(() => undefined);
  }
}

/**
 * Feeds every chunk of `source` to `take` as it is emitted, pausing the stream while `take` waits for a
 * buffer. Events, not an async iterator: the iterator's `read()` joins the chunks buffered meanwhile into a
 * fresh buffer (a second copy, and external memory that brought on a full garbage collection every few dozen
 * megabytes of an upload), and costs promises a chunk. Like the iterator, a failure destroys the stream (but a
 * request whose body has all arrived, which can still be answered).
 */
function drain(source: Readable, take: (chunk: Uint8Array) => Promise<void> | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    /** The chunk still being staged, if `take` had to wait: 'end' may come before it is. */
    let staging: Promise<void> | undefined;
    const cleanup = () => {
      settled = true;
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', fail);
      source.off('close', onClose);
    };
    function fail(err: unknown) {
      if (settled) return;
      cleanup();
      // A request body already received whole is left as it is, so that the refusal can still be answered.
      if (!(source as { complete?: boolean }).complete) source.destroy();
      reject(err);
    }
    function onData(chunk: Uint8Array) {
      let wait: Promise<void> | undefined;
      try {
        wait = take(chunk);
      } catch (err) {
        fail(err);
        return;
      }
      if (wait) {
        source.pause();
        staging = wait;
        wait.then(() => {
          staging = undefined;
          if (!settled) source.resume();
        }, fail);
      }
    }
    function onEnd() {
      if (settled) return;
      const last = staging;
      cleanup();
      if (last) last.then(resolve, reject);
      else resolve();
    }
    function onClose() {
      if (!source.readableEnded) fail(Object.assign(new Error('the body ended before its end (premature close)'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    }
    source.on('data', onData);
    source.once('end', onEnd);
    source.on('error', fail);
    source.once('close', onClose);
  });
}

async function openStage(file: string, limit: number | undefined, tryDirect: boolean): Promise<Stage> {
  const aligned = limit !== undefined && limit >= LARGE_OBJECT ? alignedStages.take(DIRECT_STAGES) : undefined;
  if (aligned) {
    const release = () => alignedStages.give(aligned);
    try {
      // macOS and Windows have no O_DIRECT.
      const direct = tryDirect && constants.O_DIRECT !== undefined ? await openDirect(file) : undefined;
      const out = direct ?? (await open(file, 'wx'));
      return { out, buffers: aligned, direct: direct !== undefined, directRefused: tryDirect && !direct, release };
    } catch (err) {
      release();
      throw err;
    }
  }
  const out = await open(file, 'wx');
  const buffers = [stages.take(STAGE_BYTES), stages.take(STAGE_BYTES)];
  return { out, buffers, direct: false, directRefused: false, release: () => buffers.forEach((b) => stages.give(b)) };
}

/** The new file opened for direct writes, or undefined when its filesystem refuses `O_DIRECT`. */
async function openDirect(file: string): Promise<FileHandle | undefined> {
  try {
    return await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT, 0o666);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
    // Linux creates the file before it checks the flag.
    await rm(file, { force: true });
    return undefined;
  }
}

/** One direct write of `length` staged bytes, padded with zeros to a whole page (only the last one is short). */
async function writeDirect(out: FileHandle, buffer: Uint8Array, length: number, position: number): Promise<void> {
  const padded = Math.ceil(length / PAGE) * PAGE;
  buffer.fill(0, length, padded);
  await writeFully(out, buffer.subarray(0, padded), position);
}

/**
 * A staged megabyte goes through the page cache as 64 KiB writes, all at once (distinct offsets, on the I/O
 * threads). The kernel sizes page-cache folios by the write: a 1 MiB write takes high-order pages, which a VM
 * whose host reclaims free memory has to fault back in; 64 KiB writes (cp's size, through splice) cost 3–4
 * times less system time for the same gigabyte here (bench/RESULTS.md).
 */
const WRITE_PIECE = 64 * 1024;

async function writePieces(out: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  const pieces: Promise<void>[] = [];
  for (let start = 0; start < bytes.length; start += WRITE_PIECE) {
    const piece = bytes.subarray(start, Math.min(bytes.length, start + WRITE_PIECE));
    pieces.push(writeFully(out, piece, position + start));
  }
  // Every piece settles before the buffer may be reused, even when one of them failed.
  for (const outcome of await Promise.allSettled(pieces)) if (outcome.status === 'rejected') throw outcome.reason;
}

async function writeFully(out: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await out.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}
