/**
 * Positioned reads from one file, with every I/O failure turned into a `FileReadError`. The file's SHA-256
 * is kept on the way: a read that continues the bytes hashed so far is hashed as it arrives, so a reader
 * that streams through the file gets its digest without a second pass (`sha256()` reads only what was
 * skipped). A file whose digest its tree knows already (`SourceTree.knownSha256`) is not hashed at all.
 */
import { createHash, type Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { FileReadError } from '../conversion-errors.js';
import { SourceTree } from '../source-tree.js';

const digestReadBytes = 1 << 20;

export class FileSource {
  readonly path: string;
  readonly size: number;
  readonly #handle: FileHandle;
  readonly #hash: Hash = createHash('sha256');
  /** Bytes [0, #hashed) are in #hash. */
  #hashed = 0;
  #digest: Promise<string> | undefined;
  /** Whether reads are no longer hashed (the digest is taken, or was known from the start). */
  #final = false;

  private constructor(path: string, handle: FileHandle, size: number, known: string | undefined) {
    this.path = path;
    this.#handle = handle;
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
      return new FileSource(path, handle, (await handle.stat()).size, within.knownSha256(path));
    } catch (cause) {
      await handle.close().catch(() => undefined);
      throw new FileReadError(`The file ${baseName(path)} could not be read: ${(cause as NodeJS.ErrnoException).code ?? 'error'}.`, { cause });
    }
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
    await this.#handle.close().catch(() => undefined);
  }
}

export function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i < 0 ? path : path.slice(i + 1);
}
