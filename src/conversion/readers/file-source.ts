/** Positioned reads from one file, with every I/O failure turned into a `FileReadError`. */
import { open, type FileHandle } from 'node:fs/promises';
import { FileReadError } from '../errors.js';

export class FileSource {
  readonly path: string;
  readonly size: number;
  readonly #handle: FileHandle;

  private constructor(path: string, handle: FileHandle, size: number) {
    this.path = path;
    this.#handle = handle;
    this.size = size;
  }

  static async open(path: string): Promise<FileSource> {
    let handle: FileHandle;
    try {
      handle = await open(path, 'r');
    } catch (cause) {
      throw new FileReadError(`The file ${baseName(path)} could not be opened: ${(cause as Error).message}.`, { cause });
    }
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new Error('not a regular file');
      return new FileSource(path, handle, stat.size);
    } catch (cause) {
      await handle.close().catch(() => undefined);
      throw new FileReadError(`The file ${baseName(path)} could not be read: ${(cause as Error).message}.`, { cause });
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
    return done === want ? out : out.subarray(0, done);
  }

  async close(): Promise<void> {
    await this.#handle.close().catch(() => undefined);
  }
}

export function baseName(path: string): string {
  const i = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return i < 0 ? path : path.slice(i + 1);
}
