/**
 * The folder store's uploads in parts, written in place (decision 0031): the parts folder holds one file the
 * size of the whole object (`data`, sparse until written), each part is written at its offset as it arrives,
 * checked against its size and CRC-32 (or SHA-256) on the way (decision 0032), and a part counts once its marker
 * file (`00001`...) exists.
 * Completion is one hashing read of `data` and a rename to the target: no second copy of the bytes.
 *
 * What keeps every promise of the store: a part is written in place only while its region holds no stored
 * part (no marker), so a refused body can only spoil bytes nobody counts; a part sent again over a stored one
 * goes to a file of its own first and is copied in only once it is checked. Writes of one part are serialized,
 * and completion waits for the part writes under way and refuses new ones before it reads, so nothing can write
 * into the file after its hash was checked. These locks live in the process: a folder store's uploads are
 * written by the one `nds serve` that owns the folder (no folder is shared between nodes, docs/deploy.md).
 */
import { readFileSync } from 'node:fs';
import { open, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes, createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { BufferPool } from '../core/buffer-pool.js';
import { ContentMismatchError, MultipartPartMissingError, MultipartUploadGoneError, type PartInfo, type PutOptions } from './object-store.js';
import { PAGE } from './aligned-buffers.js';
import { checkWritten, writeObjectFile, writeObjectRange } from './object-file-write.js';
import { RangeHasher } from './range-hasher.js';

/** The size of the object an upload assembles and the size of its parts (all but the last). */
export interface PartsLayout {
  size: number;
  partSize: number;
}

const LAYOUT = 'layout.json';
const DATA = 'data';
const READ_BYTES = 4 << 20;
const readBuffers = new BufferPool(4);

export const markerName = (partNumber: number) => String(partNumber).padStart(5, '0');

/** The layout of the upload whose parts folder is `dir`, or `undefined` for a folder of one file a part (or none). */
export function readLayout(dir: string): PartsLayout | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path.join(dir, LAYOUT), 'utf8')) as { size: number; part_size: number };
    return { size: parsed.size, partSize: parsed.part_size };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

export function partCountOf(layout: PartsLayout): number {
  return Math.ceil(layout.size / layout.partSize);
}

export function partLengthOf(layout: PartsLayout, partNumber: number): number {
  const count = partCountOf(layout);
  return partNumber < count ? layout.partSize : layout.size - layout.partSize * (count - 1);
}

/** What this process knows of an upload while it is open: its writes under way and its hash so far. */
interface UploadActivity {
  writers: number;
  closing: boolean;
  idle: Array<() => void>;
  /** Each part's count of writes into its region (in place or copied in), so a hash can tell it read the last. */
  generations: Map<number, number>;
  /** The whole file's hash, fed on the hashing thread part by part in order: the next part, and each fed part's generation. */
  hashed: { next: number; fed: Map<number, number>; running: Promise<void> | undefined; again: boolean; broken: boolean };
}

export class FolderMultipart {
  /** The tail of each lock's queue, by name: `<dir>#<part>` for a part's writes, `<dir>#close` for completion. */
  readonly #queues = new Map<string, Promise<void>>();
  readonly #activity = new Map<string, UploadActivity>();
  readonly #hasher = new RangeHasher();

  /** Makes the parts folder `dir` with its layout and the sparse file the parts are written into. */
  async create(dir: string, layout: PartsLayout): Promise<void> {
    await writeFile(path.join(dir, LAYOUT), JSON.stringify({ size: layout.size, part_size: layout.partSize }), { flag: 'wx' });
    const data = await open(path.join(dir, DATA), 'wx');
    try {
      await data.truncate(layout.size);
    } finally {
      await data.close();
    }
  }

  /** The parts stored whole: those whose marker exists. */
  async listParts(dir: string, layout: PartsLayout): Promise<PartInfo[]> {
    const count = partCountOf(layout);
    const parts: PartInfo[] = [];
    for (const name of (await readdir(dir)).filter((n) => /^\d{5}$/.test(n)).sort()) {
      const n = Number(name);
      if (n < 1 || n > count) continue;
      const s = await stat(path.join(dir, name)).catch(() => undefined);
      if (s?.isFile()) parts.push({ partNumber: n, size: partLengthOf(layout, n), etag: `"${n.toString(16)}-${Math.floor(s.mtimeMs * 1000).toString(16)}-${s.ino.toString(16)}"` });
    }
    return parts;
  }

  /**
   * Stores part `partNumber` from `body`: in place when no stored part is there, else through a file of its
   * own copied in once checked. A body of another length, SHA-256 or CRC-32 than `options` names is refused
   * (`ContentMismatchError`) and the stored parts are as they were. `MultipartUploadGoneError` when the upload
   * is being completed or is gone.
   */
  async putPart(dir: string, layout: PartsLayout, partNumber: number, body: Readable | Iterable<Uint8Array>, options: PutOptions, tryDirect: boolean): Promise<{ directRefused: boolean }> {
    const count = partCountOf(layout);
    const length = partLengthOf(layout, partNumber);
    if (partNumber < 1 || partNumber > count) throw new ContentMismatchError({ size: 0 }, { size: options.contentLength ?? 0 });
    if (options.contentLength !== undefined && options.contentLength !== length) throw new ContentMismatchError({ size: length }, { size: options.contentLength });
    const checked: PutOptions = { contentLength: length, sha256: options.sha256, crc32: options.crc32 };
    return this.#serialized(`${dir}#${partNumber}`, async () => {
      const activity = this.#activityOf(dir);
      if (activity.closing) throw new MultipartUploadGoneError(dir);
      activity.writers++;
      try {
        const marker = path.join(dir, markerName(partNumber));
        const stored = await stat(marker).then(
          () => true,
          () => false,
        );
        const offset = (partNumber - 1) * layout.partSize;
        // A direct write pads its last page with zeros: only where that page is the part's own, or past the file's end.
        const direct = tryDirect && offset % PAGE === 0 && (length % PAGE === 0 || partNumber === count);
        let directRefused = false;
        const bump = () => activity.generations.set(partNumber, (activity.generations.get(partNumber) ?? 0) + 1);
        if (!stored) {
          bump();
          const written = await writeObjectRange(body, path.join(dir, DATA), offset, { ...checked, endOfFile: partNumber === count ? layout.size : undefined }, direct).catch(gone(dir));
          directRefused = written.directRefused;
          checkWritten(checked, written);
        } else {
          // Over a stored part: the new bytes are checked in a file of their own before they replace it.
          const side = path.join(dir, `${markerName(partNumber)}.${randomBytes(6).toString('hex')}.tmp`);
          try {
            const written = await writeObjectFile(body, side, checked, tryDirect).catch(gone(dir));
            directRefused = written.directRefused;
            checkWritten(checked, written);
            await unlink(marker).catch(() => undefined);
            bump();
            await copyInto(side, path.join(dir, DATA), offset, length).catch(gone(dir));
          } finally {
            await rm(side, { force: true });
          }
        }
        await writeFile(marker, '', { flag: 'w' }).catch(gone(dir));
        return { directRefused };
      } catch (err) {
        // A write to an upload gone leaves nothing of it in this process either.
        if (err instanceof MultipartUploadGoneError && activity.writers === 1 && !activity.closing && this.#activity.get(dir) === activity) this.#activity.delete(dir);
        throw err;
      } finally {
        if (--activity.writers === 0) this.#settle(activity);
        this.#feed(dir, layout, activity);
      }
    });
  }

  /**
   * Feeds the stored parts from the next unhashed one on into the upload's hash, in order, until a part is
   * missing or the upload closes; runs once at a time, and once more when called meanwhile. Each part is read
   * under its lock (no write of it under way) and its generation noted, so that completion can tell whether a
   * part was written again after it was hashed.
   */
  #feed(dir: string, layout: PartsLayout, activity: UploadActivity): void {
    const h = activity.hashed;
    if (h.broken || activity.closing || this.#activity.get(dir) !== activity) return;
    if (h.running) {
      h.again = true;
      return;
    }
    const count = partCountOf(layout);
    h.running = (async () => {
      do {
        h.again = false;
        while (!activity.closing && h.next <= count) {
          const n = h.next;
          const fed = await this.#serialized(`${dir}#${n}`, async () => {
            if (activity.closing || !(await exists(path.join(dir, markerName(n))))) return false;
            const generation = activity.generations.get(n) ?? 0;
            await this.#hasher.update(dir, path.join(dir, DATA), (n - 1) * layout.partSize, partLengthOf(layout, n));
            h.fed.set(n, generation);
            return true;
          });
          if (!fed) break;
          h.next++;
        }
      } while (h.again && !activity.closing);
    })()
      .catch(() => {
        // The hash state is unknown now: completion hashes the file anew.
        h.broken = true;
      })
      .finally(() => {
        h.running = undefined;
      });
  }

  /**
   * The SHA-256 of the whole file once every write has ended (the upload closing): the hash fed so far, fed on
   * to the end, when no part it covers was written since; otherwise the file hashed anew, once.
   */
  async #finalHash(dir: string, layout: PartsLayout, activity: UploadActivity): Promise<string> {
    const h = activity.hashed;
    await h.running;
    const data = path.join(dir, DATA);
    const count = partCountOf(layout);
    const current = !h.broken && [...h.fed].every(([n, generation]) => (activity.generations.get(n) ?? 0) === generation);
    try {
      if (!current || h.next === 1) {
        await this.#hasher.drop(dir);
        await this.#hasher.update(dir, data, 0, layout.size);
      } else if (h.next <= count) {
        const offset = (h.next - 1) * layout.partSize;
        await this.#hasher.update(dir, data, offset, layout.size - offset);
      }
      return await this.#hasher.digest(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
      // No hashing thread: the event loop reads the file.
      await this.#hasher.drop(dir).catch(() => undefined);
      return hashFile(data, layout.size);
    }
  }

  /**
   * Checks that parts 1..`partCount` are stored, refuses new part writes and waits for those under way, hashes
   * `data` once and renames it to `file` when its size and SHA-256 are the promised ones; the parts folder is
   * removed afterwards, whatever the outcome, except when a part is missing (`MultipartPartMissingError`: the
   * upload stays open). `MultipartUploadGoneError` when another completion or an abort took the upload.
   */
  async complete(dir: string, layout: PartsLayout, partCount: number, file: string, target: { size: number; sha256: string }): Promise<void> {
    await this.#serialized(`${dir}#close`, async () => {
      const activity = this.#activityOf(dir);
      activity.closing = true;
      try {
        while (activity.writers > 0) await new Promise<void>((resolve) => activity.idle.push(resolve));
        if (readLayout(dir) === undefined) throw new MultipartUploadGoneError(dir);
        const stored = new Set((await this.listParts(dir, layout).catch(gone(dir))).map((p) => p.partNumber));
        const missing = Array.from({ length: partCount }, (_, i) => i + 1).filter((n) => !stored.has(n));
        if (partCount !== partCountOf(layout) || missing.length > 0) throw new MultipartPartMissingError(dir, missing);
        try {
          if (layout.size !== target.size) throw new ContentMismatchError({ size: target.size }, { size: layout.size });
          const data = path.join(dir, DATA);
          const sha256 = await this.#finalHash(dir, layout, activity).catch(gone(dir));
          if (sha256 !== target.sha256.toLowerCase()) throw new ContentMismatchError({ sha256: target.sha256 }, { size: layout.size, sha256 });
          await rename(data, file).catch(gone(dir));
        } finally {
          await this.remove(dir);
        }
      } finally {
        activity.closing = false;
        this.#settle(activity);
      }
    });
  }

  /** Removes the parts folder and what this process knew of it; writes under way fail when they mark their part. */
  async remove(dir: string): Promise<void> {
    // Renamed away first, in one step: \`rm\` deletes the files before their folder, and a part sent meanwhile
    // saw the folder and wrote into it (an upload aborted, its room given back, taking parts again).
    const doomed = `${dir}.gone-${randomBytes(6).toString('hex')}`;
    const moved = await rename(dir, doomed).then(
      () => true,
      (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? false : Promise.reject(err)),
    );
    if (moved) await rm(doomed, { recursive: true, force: true, maxRetries: 3 });
    this.#activity.delete(dir);
    await this.#hasher.drop(dir).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.#hasher.close();
  }

  #activityOf(dir: string): UploadActivity {
    let a = this.#activity.get(dir);
    if (!a) {
      a = { writers: 0, closing: false, idle: [], generations: new Map(), hashed: { next: 1, fed: new Map(), running: undefined, again: false, broken: false } };
      this.#activity.set(dir, a);
    }
    return a;
  }

  #settle(activity: UploadActivity): void {
    if (activity.writers === 0) for (const resolve of activity.idle.splice(0)) resolve();
  }

  /** Runs `fn` once every earlier call of the same `name` has ended. */
  async #serialized<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const before = this.#queues.get(name) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    this.#queues.set(name, tail);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (this.#queues.get(name) === tail) this.#queues.delete(name);
    }
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}


/** A file of the parts folder gone: the upload was completed or aborted meanwhile. */
function gone(dir: string): (err: unknown) => never {
  return (err) => {
    if ((err as NodeJS.ErrnoException)?.code === 'ENOENT') throw new MultipartUploadGoneError(dir, { cause: err });
    throw err;
  };
}

/** Copies `length` bytes of `from` into `to` at `offset`. */
async function copyInto(from: string, to: string, offset: number, length: number): Promise<void> {
  const input = await open(from, 'r');
  // Opened inside: a completion or abort may have taken `to` away, and `input` must still be closed.
  let output: Awaited<ReturnType<typeof open>> | undefined;
  const buffer = readBuffers.take(READ_BYTES);
  try {
    output = await open(to, 'r+');
    for (let done = 0; done < length; ) {
      const { bytesRead } = await input.read(buffer, 0, Math.min(buffer.length, length - done), done);
      if (bytesRead === 0) throw new Error(`${from} ended at ${done} of ${length} bytes`);
      for (let w = 0; w < bytesRead; ) w += (await output.write(buffer, w, bytesRead - w, offset + done + w)).bytesWritten;
      done += bytesRead;
    }
  } finally {
    readBuffers.give(buffer);
    await input.close();
    await output?.close();
  }
}

/** SHA-256 of the first `size` bytes of `file`, the next read under way while a chunk is hashed. */
async function hashFile(file: string, size: number): Promise<string> {
  const handle = await open(file, 'r');
  const buffers = [readBuffers.take(READ_BYTES), readBuffers.take(READ_BYTES)];
  const hash = createHash('sha256');
  let reading: Promise<{ bytesRead: number }> | undefined;
  try {
    let position = 0;
    const readAt = (i: number, at: number) => handle.read(buffers[i], 0, Math.min(READ_BYTES, size - at), at);
    let current = 0;
    reading = size > 0 ? readAt(0, 0) : undefined;
    while (reading) {
      const { bytesRead } = await reading;
      if (bytesRead === 0) throw new ContentMismatchError({ size }, { size: position });
      const filled = current;
      position += bytesRead;
      current = 1 - current;
      reading = position < size ? readAt(current, position) : undefined;
      hash.update(buffers[filled].subarray(0, bytesRead));
    }
    return hash.digest('hex');
  } finally {
    await reading?.catch(() => undefined);
    buffers.forEach((b) => readBuffers.give(b));
    await handle.close();
  }
}
