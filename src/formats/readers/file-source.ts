/**
 * Positioned reads from one file, with every I/O failure turned into a `FileReadError`. The file's SHA-256
 * is kept on the way: a read that continues the bytes hashed so far is hashed as it arrives, so a reader
 * that streams through the file gets its digest without a second pass (`sha256()` reads only what was
 * skipped). A file whose digest its tree knows already (`SourceTree.knownSha256`) is not hashed at all.
 *
 * Reads of 256 KiB or more (a reader's batches) of content from the content-addressed store go past the page
 * cache with `O_DIRECT` where the file system takes it (decision 0043): a conversion reads each source once,
 * and filling the cache with it cost this project's VM 1.8–2.4 s of system time a GiB (pages the guest
 * touches anew), against 0.1 s read directly.
 */
import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { AlignedBufferPool, PAGE } from '../../objects/aligned-buffers.js';
import { FileReadError } from '../conversion-errors.js';
import { SourceTree } from '../source-tree.js';

const digestReadBytes = 1 << 20;

/** Reads of at least this many bytes go past the page cache, when the file allows it. */
const DIRECT_READ_MIN = 256 << 10;
/** The largest direct read: a reader's batch (4 MiB) with a page before and after it, in 64 KiB pages. */
const DIRECT_READ_MAX = (4 << 20) + (64 << 10);
const directStages = new AlignedBufferPool(DIRECT_READ_MAX, { perSlab: 2, maxBuffers: 16 });

/** A second handle of the same open file for `O_DIRECT` reads; undefined where there is none (not Linux, or no O_DIRECT there). */
async function directTwin(handle: FileHandle): Promise<FileHandle | undefined> {
  if (constants.O_DIRECT === undefined) return undefined;
  try {
    // The open file itself (its /proc link), not its path again: nothing can swap it in between.
    return await open(`/proc/self/fd/${handle.fd}`, constants.O_RDONLY | constants.O_DIRECT);
  } catch {
    return undefined;
  }
}

export class FileSource {
  readonly path: string;
  readonly size: number;
  readonly #handle: FileHandle;
  /** The `O_DIRECT` handle, closed with the source; reads stop using it (`#directReads`) once a read was refused. */
  readonly #direct: FileHandle | undefined;
  #directReads: boolean;
  readonly #hash: Hash = createHash('sha256');
  /** Bytes [0, #hashed) are in #hash. */
  #hashed = 0;
  #digest: Promise<string> | undefined;
  /** Whether reads are no longer hashed (the digest is taken, or was known from the start). */
  #final = false;

  private constructor(path: string, handle: FileHandle, direct: FileHandle | undefined, size: number, known: string | undefined) {
    this.path = path;
    this.#handle = handle;
    this.#direct = direct;
    this.#directReads = direct !== undefined;
    this.size = size;
    if (known !== undefined) {
      this.#digest = Promise.resolve(known);
      this.#final = true;
    }
  }

  /** Opens `path`, a regular file inside `tree` (by default the file's own folder); throws `FileReadError` otherwise. */
  static async open(path: string, tree?: SourceTree): Promise<FileSource> {
    const within = tree ?? (await SourceTree.around(path));
    const handle = await within.open(path);
    try {
      const size = (await handle.stat()).size;
      const known = within.knownSha256(path);
      // Only content taken from the content-addressed store (its digest known): a file just written, such as a
      // blob checked out of git, still has dirty pages, which a direct read would first write to the disk.
      const direct = known !== undefined && size >= DIRECT_READ_MIN ? await directTwin(handle) : undefined;
      return new FileSource(path, handle, direct, size, known);
    } catch (cause) {
      await handle.close().catch(() => undefined);
      throw new FileReadError(`The file ${baseName(path)} could not be read: ${(cause as NodeJS.ErrnoException).code ?? 'error'}.`, { cause });
    }
  }

  /** Whether large reads go past the page cache (stored content of 256 KiB or more, on a file system that takes `O_DIRECT`). */
  get readsPastCache(): boolean {
    return this.#directReads;
  }

  /**
   * Reads up to `length` bytes at `position` into a fresh, 8-byte aligned array (so typed views of it work).
   * The result is shorter only at the end of the file.
   */
  async read(position: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    const want = Math.max(0, Math.min(length, this.size - position));
    const out = into && into.length >= want ? into.subarray(0, want) : new Uint8Array(want);
    let done = 0;
    try {
      if (want >= DIRECT_READ_MIN && this.#directReads) done = await this.#readDirect(position, want, out);
      while (done < want) {
        const { bytesRead } = await this.#handle.read(out, done, want - done, position + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
    } catch (cause) {
      throw new FileReadError(`Reading ${baseName(this.path)} failed: ${(cause as Error).message}.`, { cause });
    }
    const got = done === want ? out : out.subarray(0, done);
    // Hashed now, before the caller may change the bytes in place (big-endian swaps) or reuse the buffer.
    if (!this.#final && position <= this.#hashed && position + got.length > this.#hashed) {
      this.#hash.update(got.subarray(this.#hashed - position));
      this.#hashed = position + got.length;
    }
    return got;
  }

  /**
   * Reads `want` bytes at `position` into `out` past the page cache: the whole pages around them into an aligned
   * buffer, then copied out. Returns the bytes read (0 when no aligned buffer is free or the range is too
   * large: the caller reads them the ordinary way).
   */
  async #readDirect(position: number, want: number, out: Uint8Array): Promise<number> {
    const start = Math.floor(position / PAGE) * PAGE;
    const span = Math.ceil((position + want) / PAGE) * PAGE - start;
    if (span > DIRECT_READ_MAX) return 0;
    const taken = directStages.take(1);
    if (!taken) return 0;
    const stage = taken[0]!;
    try {
      let got = 0;
      while (got < span) {
        const { bytesRead } = await this.#direct!.read(stage, got, span - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
        // Direct reads end early only at the end of the file.
        if (got % PAGE !== 0) break;
      }
      const usable = Math.max(0, Math.min(want, got - (position - start)));
      out.set(stage.subarray(position - start, position - start + usable));
      return usable;
    } catch (err) {
      // A file system that takes O_DIRECT at open but not for this read: read the ordinary way from now on (the
      // handle stays open until `close()`: a read running beside this one may still be using it).
      if ((err as NodeJS.ErrnoException).code !== 'EINVAL') throw err;
      this.#directReads = false;
      return 0;
    } finally {
      directStages.give(taken);
    }
  }

  /**
   * SHA-256 (hex) of the file's `size` bytes: what the reads so far streamed through is not read again.
   * Call it before `close()`; later calls return the same digest.
   */
  sha256(): Promise<string> {
    this.#digest ??= (async () => {
      const scratch = new Uint8Array(Math.min(digestReadBytes, Math.max(1, this.size - this.#hashed)));
      while (this.#hashed < this.size) {
        const bytes = await this.read(this.#hashed, scratch.length, scratch);
        if (bytes.length === 0) throw new FileReadError(`${baseName(this.path)} ended while it was being read.`);
      }
      this.#final = true;
      return this.#hash.digest('hex');
    })();
    return this.#digest;
  }

  async close(): Promise<void> {
    await this.#direct?.close().catch(() => undefined);
    await this.#handle.close().catch(() => undefined);
  }
}

export function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i < 0 ? path : path.slice(i + 1);
}
