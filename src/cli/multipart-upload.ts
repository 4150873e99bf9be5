/**
 * One large file of `nds datasets upload`, sent in parts (decision 0020). The parts' checksums (their SHA-256,
 * or their CRC-32 where the server's store takes that, decision 0032) are taken by a read that runs up to 128 MiB
 * ahead (decision 0047), so that one `part-urls` request (`part-url-batches.ts`, decision 0037) names the URLs
 * of many parts, each bound to its size and checksum. The file is then read in order once more, from the page
 * cache: each chunk feeds the whole file's SHA-256 (the manifest's), and each part is sent from the buffer it
 * was read in (up to 16 MiB, decision 0035; larger parts from the page cache), several at a time, each retried
 * alone. The upload's id is remembered beside the hash cache
 * (`upload-state.ts`): run again after a kill or a lost connection, the client asks the server which parts it
 * holds and sends only the others. Completion names the whole file's hash; the server checks it over the
 * assembled file.
 */
import { createHash, type Hash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { crc32 } from '../core/crc32.js';
import { BufferPool } from '../core/buffer-pool.js';
import { ApiError, type ApiClient, type RequestOptions } from './api-client.js';
import { CliError } from './cli-error.js';
import type { HashCache } from './hash-cache.js';
import { putBytes, putFile, TransferError, withRetries } from './http-transfer.js';
import { MAX_PARTS_PER_REQUEST, PartUrlBatches, type PartChecksumField, type PartTarget } from './part-url-batches.js';
import { TaskPool } from './task-pool.js';
import type { Progress } from './transfer-progress.js';
import type { UploadState } from './upload-state.js';

export interface LargeFile {
  path: string;
  abs: string;
  size: number;
  mtimeMs: number;
  ino: number;
}

export interface PartsOptions {
  /** Parts in flight at once. */
  concurrency: number;
  retries: number;
  progress: Progress;
  state: UploadState;
  hashCache?: HashCache;
  /** The file's SHA-256 when it is known (remembered or just computed): content already stored is not sent. */
  sha256?: string;
  /** Called after each part is stored. */
  onPart?: (part: number, count: number) => void;
}

export interface PartsOutcome {
  sha256: string;
  outcome: 'uploaded' | 'present';
  /** Whether the file was read (to hash it, send it, or both). */
  read: boolean;
  /** Bytes of parts the server held already when this run began. */
  resumedBytes: number;
  /** Bytes of parts this run sent (each once, retries not counted). */
  sentBytes: number;
}

interface UploadInfo {
  upload_id: string;
  part_size: number;
  part_count: number;
  /** What a part URL is bound to; a server before decision 0032 does not say (SHA-256). */
  part_checksum?: 'sha256' | 'crc32';
}

/** A part's checksum as the server asks for it, fed chunk by chunk. */
interface PartSum {
  update(bytes: Uint8Array): void;
  /** The field of the part in a `part-urls` request. */
  named(): PartChecksumField;
}

function partSum(kind: 'sha256' | 'crc32'): PartSum {
  if (kind === 'sha256') {
    const hash = createHash('sha256');
    return { update: (bytes) => hash.update(bytes), named: () => ({ sha256: hash.digest('hex') }) };
  }
  let value = 0;
  return {
    update: (bytes) => {
      value = crc32(bytes, value);
    },
    named: () => ({ crc32: value.toString(16).padStart(8, '0') }),
  };
}

const CHUNK = 1 << 20;
const readBuffers = new BufferPool(4);
/**
 * How far the checksums are taken ahead of the reader. A part's URL is bound to its checksum: taken as each
 * part was read for sending, one `part-urls` request asked for each part's URL alone (128 requests a GiB, each
 * 5–9 ms of the server's CPU: a quarter of what the server spent on an upload in parts). 128 MiB ahead, one
 * request names 16 parts of 8 MiB, and the bytes read ahead are still in the page cache when they are read
 * again to be sent.
 */
const CHECKSUMS_AHEAD_BYTES = 128 << 20;
/**
 * Parts up to this size are read into memory once, hashed there and sent from there (one read of the file, not
 * a hashing read and a sending read); larger ones (files past 10,000 parts of 8 MiB) are read again to be sent,
 * so that memory stays bounded whatever the part size.
 */
const HELD_PART_BYTES = 16 << 20;

/**
 * An API call retried like a transfer: a connection that failed or an answer of 5xx is tried again with
 * backoff; any other refusal is final.
 */
async function call<T>(api: ApiClient, retries: number, path: string, options?: RequestOptions): Promise<T> {
  return withRetries(retries + 1, async () => {
    try {
      return await api.request<T>(path, options);
    } catch (err) {
      if (err instanceof ApiError) {
        if (err.status >= 500 || err.status === 429) throw new TransferError(err.message, true, err.status, err);
        throw err;
      }
      if (err instanceof CliError && /^cannot reach /.test(err.message)) throw new TransferError(err.message, true, undefined, err);
      throw err;
    }
  }).catch((err: unknown) => {
    throw err instanceof TransferError && err.cause instanceof Error ? err.cause : err;
  });
}

export async function uploadInParts(api: ApiClient, datasetId: string, file: LargeFile, options: PartsOptions): Promise<PartsOutcome> {
  const base = `/datasets/${encodeURIComponent(datasetId)}/multipart-uploads`;
  const { progress, state } = options;
  let upload: UploadInfo | undefined;
  let stored = new Set<number>();
  const saved = state.get(datasetId, file.abs, file);
  if (saved) {
    try {
      const status = await call<UploadInfo & { parts: Array<{ part_number: number }> }>(api, options.retries, `${base}/${saved.upload_id}`);
      upload = status;
      stored = new Set(status.parts.map((p) => p.part_number));
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'upload_not_found')) throw err;
      state.forget(datasetId, file.abs);
    }
  }
  if (!upload) {
    const started = await call<{ status: 'present' | 'parts' } & UploadInfo>(api, options.retries, base, { method: 'POST', body: { path: file.path, size: file.size, sha256: options.sha256 } });
    if (started.status === 'present') {
      progress.skip(file.size);
      return { sha256: options.sha256!, outcome: 'present', read: false, resumedBytes: 0, sentBytes: 0 };
    }
    upload = started;
    state.set(datasetId, file.abs, { upload_id: upload.upload_id, size: file.size, mtimeMs: file.mtimeMs, ino: file.ino, part_size: upload.part_size, parts_done: [] });
    await state.save();
  }
  const { upload_id: uploadId, part_size: partSize, part_count: partCount } = upload;
  const lengthOf = (n: number) => (n < partCount ? partSize : file.size - partSize * (partCount - 1));

  let resumedBytes = 0;
  let sentBytes = 0;
  let savedAt = performance.now();
  const parts = new TaskPool(options.concurrency);
  const partUrls = new PartUrlBatches(async (asked) => (await call<{ parts: PartTarget[] }>(api, options.retries, `${base}/${uploadId}/part-urls`, { method: 'POST', body: { parts: asked } })).parts);
  /** Sends part `n`: from `bytes`, the part as it was read and hashed, when given; else read again from the file. */
  const sendPart = async (n: number, bytes: Uint8Array | undefined) => {
    const start = (n - 1) * partSize;
    const length = lengthOf(n);
    await withRetries(
      options.retries + 1,
      async () => {
        const target = await partUrls.urlFor(n);
        let sent = 0;
        const onBytes = (b: number) => {
          sent += b;
          progress.advance(b);
        };
        try {
          if (bytes) await putBytes(target, bytes, onBytes);
          else await putFile(target, file.abs, length, onBytes, start);
        } catch (err) {
          progress.advance(-sent);
          // A part refused for its content was damaged on the way (its checksum was just taken): send it again.
          if (err instanceof TransferError && err.status === 400) throw new TransferError(`part ${n} refused: ${err.message}`, true, 400, err);
          throw err;
        }
      },
      (err, attempt) => progress.log(`retrying part ${n} of ${file.path} (attempt ${attempt + 1}): ${err.message}`),
    ).catch((err: unknown) => {
      if (err instanceof TransferError) throw new CliError(`${file.path}: part ${n} of ${partCount}: ${err.message}${err.status === 400 ? '; did the file change during the upload? Run the upload again.' : ''}`);
      throw err;
    });
    sentBytes += length;
    state.partDone(datasetId, file.abs, n);
    options.onPart?.(n, partCount);
    if (performance.now() - savedAt > 2000) {
      savedAt = performance.now();
      await state.save();
    }
  };

  // The reader: the file's hash fed from each chunk, parts queued as they are read, their checksums taken
  // ahead. A part of up to HELD_PART_BYTES is read into a buffer of its own and sent from it (one buffer a part
  // in flight, and one being read); a larger one is sent by reading it again, the reader staying at most two
  // rounds of parts ahead so that it is still in the page cache.
  const whole = createHash('sha256');
  const checksum = upload.part_checksum ?? 'sha256';
  const held = partSize <= HELD_PART_BYTES ? new PartBuffers(partSize, options.concurrency + 1) : undefined;
  const buffer = held ? undefined : readBuffers.take(CHUNK);
  const handle = await open(file.abs, 'r');
  // Parts of more than 64 MiB (files past 640 GiB) have their checksum taken as they are read: one request a
  // part is nothing beside sending one.
  const partsAhead = Math.min(MAX_PARTS_PER_REQUEST, Math.floor(CHECKSUMS_AHEAD_BYTES / partSize));
  const ahead = partsAhead > 1 ? new ChecksumsAhead(handle, checksum, (n) => [(n - 1) * partSize, lengthOf(n)], file.path, (n, sum) => partUrls.known(n, sum)) : undefined;
  try {
    for (let n = 1; n <= partCount; n++) {
      const have = stored.has(n);
      // Taken ahead, a part's checksum is taken again as the part is read to be sent where that is cheap (a
      // CRC-32: 0.06–0.14 s a GiB), so that a file that changed in between stops here; a part's SHA-256 is not taken
      // twice: the store refuses a part that changed.
      const part = have ? undefined : !ahead ? partSum(checksum) : checksum === 'crc32' ? partSum('crc32') : undefined;
      const into = held ? held.take() : buffer!;
      // The read ahead and the read to send go on at once, each waiting on its own reads from the I/O threads.
      await settledBoth(have ? undefined : ahead?.through(Math.min(partCount, n + partsAhead - 1), stored), readRange(handle, into, held !== undefined, (n - 1) * partSize, lengthOf(n), whole, part, file.path));
      if (have) {
        if (held) held.give(into);
        resumedBytes += lengthOf(n);
        progress.skip(lengthOf(n));
        continue;
      }
      const sum = part?.named();
      if (!ahead) partUrls.known(n, sum!);
      else if (sum && !sameChecksum(sum, partUrls.checksumOf(n))) {
        if (held) held.give(into);
        throw new CliError(`${file.path} changed while it was read (part ${n} of ${partCount}); run the upload again`);
      }
      await parts.below(held ? options.concurrency : options.concurrency * 2);
      parts.throwIfFailed();
      const bytes = held ? into.subarray(0, lengthOf(n)) : undefined;
      parts.add(async () => {
        try {
          await sendPart(n, bytes);
        } finally {
          if (held) held.give(into);
        }
      });
    }
    await parts.drain();
  } finally {
    ahead?.close();
    await handle.close();
    if (buffer) readBuffers.give(buffer);
    await state.save();
  }
  const sha256 = whole.digest('hex');
  if (options.sha256 && options.sha256 !== sha256) {
    await call(api, options.retries, `${base}/${uploadId}`, { method: 'DELETE' }).catch(() => undefined);
    state.forget(datasetId, file.abs);
    options.hashCache?.forget(file.abs);
    throw new CliError(`${file.path} changed while it was read (SHA-256 ${sha256}, was ${options.sha256}); run the upload again`);
  }
  try {
    await completeOnServer(api, options.retries, base, uploadId, file, sha256, progress);
  } finally {
    // Stored or refused, the upload is over: a run after this one starts afresh.
    state.forget(datasetId, file.abs);
  }
  options.hashCache?.set(file.abs, { size: file.size, mtimeMs: file.mtimeMs, ino: file.ino, sha256 });
  return { sha256, outcome: 'uploaded', read: true, resumedBytes, sentBytes };
}

/**
 * Asks the server to complete the upload and waits for its result. Assembling and checking a large file can
 * outlast one request: an answer `completing` (202), or `conflict` (another request, such as a retry after a
 * lost answer, is completing it), is asked again, with pauses, until the file is stored or refused. An upload
 * gone meanwhile was completed by such a request when its content is now stored. The wait is bounded by the
 * file's size (10 minutes, or 2 MB/s, whichever is longer).
 */
async function completeOnServer(api: ApiClient, retries: number, base: string, uploadId: string, file: LargeFile, sha256: string, progress: Progress): Promise<void> {
  const limitMs = Math.max(600_000, file.size / 2000);
  const deadline = performance.now() + limitMs;
  let told = false;
  for (let pause = 250; ; pause = Math.min(pause * 2, 5000)) {
    try {
      const answer = await call<{ status: string }>(api, retries, `${base}/${uploadId}/complete`, { method: 'POST', body: { sha256 } });
      if (answer.status !== 'completing') return;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'upload_not_found') {
        const asked = await call<{ status: 'present' | 'parts'; upload_id?: string }>(api, retries, base, { method: 'POST', body: { path: file.path, size: file.size, sha256 } });
        if (asked.status === 'present') return;
        // Asking started an upload of its own: not wanted, drop it.
        await call(api, retries, `${base}/${asked.upload_id}`, { method: 'DELETE' }).catch(() => undefined);
        throw err;
      }
      if (!(err instanceof ApiError && err.code === 'conflict')) throw err;
    }
    if (performance.now() > deadline) {
      throw new CliError(`${file.path}: the server was still assembling and checking the file after ${Math.round(limitMs / 60_000)} minutes; run the upload again later: a stored file is not sent again`);
    }
    if (!told) progress.log(`${file.path}: all parts sent; the server is checking the assembled file`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Waits for both, then throws the first one's failure, if any (neither is left running). */
async function settledBoth(a: Promise<void> | undefined, b: Promise<void>): Promise<void> {
  for (const outcome of await Promise.allSettled([a, b])) if (outcome.status === 'rejected') throw outcome.reason;
}

function sameChecksum(a: PartChecksumField, b: PartChecksumField): boolean {
  return 'crc32' in a ? 'crc32' in b && a.crc32 === b.crc32 : 'sha256' in b && a.sha256 === b.sha256;
}

/**
 * The parts' checksums, taken by a read of their own ahead of the reader (see CHECKSUMS_AHEAD_BYTES), and told
 * to `onKnown` as each is taken, so that the next `part-urls` request names the part.
 */
class ChecksumsAhead {
  readonly #handle: FileHandle;
  readonly #kind: 'sha256' | 'crc32';
  readonly #rangeOf: (n: number) => [start: number, length: number];
  readonly #name: string;
  readonly #onKnown: (n: number, sum: PartChecksumField) => void;
  #buffer: Uint8Array | undefined = readBuffers.take(CHUNK);
  /** The first part whose checksum is not taken yet. */
  #next = 1;

  constructor(handle: FileHandle, kind: 'sha256' | 'crc32', rangeOf: (n: number) => [number, number], name: string, onKnown: (n: number, sum: PartChecksumField) => void) {
    this.#handle = handle;
    this.#kind = kind;
    this.#rangeOf = rangeOf;
    this.#name = name;
    this.#onKnown = onKnown;
  }

  /** Takes the checksum of every part up to `last` that is not taken yet, but those in `skip` (stored already). */
  async through(last: number, skip: ReadonlySet<number>): Promise<void> {
    for (; this.#next <= last; this.#next++) {
      const n = this.#next;
      if (skip.has(n)) continue;
      const sum = partSum(this.#kind);
      const [start, length] = this.#rangeOf(n);
      await readRange(this.#handle, this.#buffer!, false, start, length, undefined, sum, this.#name);
      this.#onKnown(n, sum.named());
    }
  }

  close(): void {
    if (this.#buffer) readBuffers.give(this.#buffer);
    this.#buffer = undefined;
  }
}

/**
 * Reads `length` bytes at `start` through `buffer`, feeding `whole` and `part` (when given): with `keep`, the
 * bytes fill `buffer` from its start (which holds the whole range), else each read reuses its first megabyte.
 */
async function readRange(handle: FileHandle, buffer: Uint8Array, keep: boolean, start: number, length: number, whole: Hash | undefined, part: PartSum | undefined, name: string): Promise<void> {
  if (keep) {
    // The next megabyte is read (on an I/O thread) while this one is hashed: the buffer has room for both.
    let reading = handle.read(buffer, 0, Math.min(CHUNK, length), start);
    for (let done = 0; done < length; ) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) throw new CliError(`${name} shrank while it was read; run the upload again`);
      const bytes = buffer.subarray(done, done + bytesRead);
      done += bytesRead;
      if (done < length) reading = handle.read(buffer, done, Math.min(CHUNK, length - done), start + done);
      whole?.update(bytes);
      part?.update(bytes);
    }
    return;
  }
  for (let done = 0; done < length; ) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK, length - done), start + done);
    if (bytesRead === 0) throw new CliError(`${name} shrank while it was read; run the upload again`);
    const bytes = buffer.subarray(0, bytesRead);
    whole?.update(bytes);
    part?.update(bytes);
    done += bytesRead;
  }
}

/**
 * The buffers parts are held in from their read until they are stored: `count` of `size` bytes, made as first
 * needed. `take` is only called while one is free (one a part in flight, and one for the part being read).
 */
class PartBuffers {
  readonly #free: Uint8Array[] = [];
  readonly #size: number;
  #left: number;

  constructor(size: number, count: number) {
    this.#size = size;
    this.#left = count;
  }

  take(): Uint8Array {
    const buffer = this.#free.pop();
    if (buffer) return buffer;
    if (this.#left === 0) throw new Error('no part buffer free');
    this.#left--;
    return new Uint8Array(this.#size);
  }

  give(buffer: Uint8Array): void {
    this.#free.push(buffer);
  }
}
