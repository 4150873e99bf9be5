import { createReadStream, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import {
  MultipartUploadGoneError,
  checkObjectKey,
  type ByteRange,
  type MultipartLayout,
  type MultipartTarget,
  type ObjectBody,
  type PartInfo,
  type ObjectInfo,
  type ObjectStore,
  type PresignedRequest,
  type PresignOptions,
  type PutOptions,
  MAX_PARTS,
} from './object-store.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { ObjectUrlSigner } from './object-url-signer.js';
import { checkWritten, LARGE_OBJECT, writeObjectFile, writeSmallObjectFile } from './object-file-write.js';
import { FolderMultipart, readLayout } from './folder-multipart.js';
import { DirectObjectWriter } from './direct-object-writer.js';

export interface FileObjectStoreOptions {
  /** Origin of the nds server that serves `/objects/<key>` for this folder; without it, no URLs. */
  baseUrl?: string;
  /** Signs presigned URLs; without it, presigning throws. */
  signer?: ObjectUrlSigner;
  /** When presigned URLs expire from: the server's clock, the one its `/objects/` routes check them against. */
  clock?: Clock;
}

/**
 * The folder object store: `<root>/<key>`, written atomically through a temporary file and a rename.
 * Its presigned URLs point at the nds server itself (`<baseUrl>/objects/<key>?expires=..&sig=..`, see
 * `objects/routes.ts`), which checks the signature and, for a PUT, the size and hash before the rename.
 */
export class FileObjectStore implements ObjectStore {
  readonly kind = 'file' as const;
  readonly partChecksum = 'crc32' as const;
  readonly root: string;
  readonly #baseUrl: string | undefined;
  readonly #signer: ObjectUrlSigner | undefined;
  readonly #clock: Clock;
  /** Set once the folder's filesystem (or the platform) refused `O_DIRECT`: large objects then go through the page cache. */
  #directRefused = false;
  /** Uploads in parts written in place (a layout given at their start), with the locks their writes take. */
  readonly #inPlace = new FolderMultipart();
  /** A conversion's chunks, written past the page cache on threads of their own (decision 0044). */
  readonly #chunks = new DirectObjectWriter();

  constructor(root: string, options: FileObjectStoreOptions = {}) {
    this.root = path.resolve(root);
    this.#baseUrl = options.baseUrl?.replace(/\/+$/, '');
    this.#signer = options.signer;
    this.#clock = options.clock ?? systemClock;
  }

  /** The file of a key; refuses any key that would land outside the root. */
  pathOf(key: string): string {
    checkObjectKey(key);
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new RangeError(`object key escapes the store: ${JSON.stringify(key)}`);
    return full;
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const file = this.pathOf(key);
    try {
      const s = await stat(file);
      if (!s.isFile()) return undefined;
      return infoOf(key, s.size, s.mtimeMs, s.ino);
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectBody | undefined> {
    const file = this.pathOf(key);
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (err) {
      if (isMissing(err) || isDirectory(err)) return undefined;
      throw err;
    }
    const s = await handle.stat();
    if (!s.isFile()) {
      await handle.close();
      return undefined;
    }
    const info = infoOf(key, s.size, s.mtimeMs, s.ino);
    // Reading from the open handle keeps a concurrent rename from mixing two versions of the object.
    const body = createReadStream('', { fd: handle, autoClose: true, start: range?.start, end: range?.end });
    return { info, body };
  }

  /**
   * Read in one synchronous call: a chunk of 100 KiB costs the server 60-80 µs of CPU this way against 270 µs
   * through a file handle's open, stat, read and close, each a trip through the thread pool. The folder store
   * is a local folder read mostly from the page cache; a read that reaches the disk holds the event loop that
   * long (decision 0014). One open file from the size to the last byte: a concurrent rename cannot mix versions.
   */
  async readAll(key: string): Promise<Buffer | undefined> {
    try {
      return readFileSync(this.pathOf(key));
    } catch (err) {
      if (isMissing(err) || isDirectory(err)) return undefined;
      throw err;
    }
  }

  async put(key: string, body: Readable | Uint8Array | string, options: PutOptions = {}): Promise<ObjectInfo> {
    const file = this.pathOf(key);
    const part = PART_KEY.exec(key);
    const layout = part ? readLayout(path.dirname(file)) : undefined;
    // A part of an upload completed or aborted: refused, as S3 refuses it, rather than leaving a folder behind.
    if (part && !layout && !(await isFolder(path.dirname(file)))) throw new MultipartUploadGoneError(key);
    if (part && layout) {
      const source = typeof body === 'string' ? [Buffer.from(body)] : body instanceof Uint8Array ? [body] : body;
      const { directRefused } = await this.#inPlace.putPart(path.dirname(file), layout, Number(part[1]), source, options, !this.#directRefused);
      if (directRefused) this.#directRefused = true;
      // The marker just written (a completion may already have taken it).
      const s = await stat(file).catch(() => undefined);
      return infoOf(key, options.contentLength ?? 0, s?.mtimeMs ?? this.#clock.now().getTime(), s?.ino ?? 0);
    }
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const nothingToCheck = options.contentLength === undefined && options.sha256 === undefined && options.crc32 === undefined;
    if ((body instanceof Uint8Array || typeof body === 'string') && nothingToCheck) {
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      if (bytes.length < LARGE_OBJECT) {
        const written = await this.#chunks.write(bytes, tmp, file);
        return written ? infoOf(key, written.size, written.mtimeMs, written.ino) : this.#putSmall(key, file, tmp, bytes);
      }
    }
    // A part's folder is the upload's: never made here, so that a part sent as its upload ends brings nothing back.
    if (!part) await mkdir(path.dirname(file), { recursive: true });
    return this.#writeThenRename(key, file, tmp, async () => {
      // Bytes are staged from the caller's array as they are (a copy of each conversion chunk cost garbage collections).
      const source = typeof body === 'string' ? [Buffer.from(body)] : body instanceof Uint8Array ? [body] : body;
      const written = await writeObjectFile(source, tmp, options, !this.#directRefused);
      if (written.directRefused) this.#directRefused = true;
      checkWritten(options, written);
    }).catch((err: unknown) => {
      // The upload's folder went while the part was written: completed or aborted meanwhile.
      if (part && isMissing(err)) throw new MultipartUploadGoneError(key, { cause: err });
      throw err;
    });
  }

  /** Runs `write` (into `tmp`), then renames `tmp` to `file`; on any failure `tmp` goes and nothing is at `file`. */
  async #writeThenRename(key: string, file: string, tmp: string, write: () => Promise<void>): Promise<ObjectInfo> {
    try {
      await write();
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    const s = await stat(file);
    return infoOf(key, s.size, s.mtimeMs, s.ino);
  }

  /**
   * A small object held in memory with nothing to check (a conversion's metadata, and its chunks where the
   * writer threads do not take them): written from the caller's array, its folder made only when the first
   * write finds it missing, with synchronous calls (decision 0041): through the thread pool, its five
   * file-system calls cost more CPU than writing the bytes.
   */
  #putSmall(key: string, file: string, tmp: string, bytes: Uint8Array): ObjectInfo {
    let s;
    try {
      try {
        s = writeSmallObjectFile(bytes, tmp);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        mkdirSync(path.dirname(file), { recursive: true });
        s = writeSmallObjectFile(bytes, tmp);
      }
      renameSync(tmp, file);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    }
    return infoOf(key, s.size, s.mtimeMs, s.ino);
  }

  async delete(key: string): Promise<void> {
    try {
      await unlink(this.pathOf(key));
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    let n = 0;
    for await (const info of this.list(prefix)) {
      await this.delete(info.key);
      n++;
    }
    return n;
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    // Start from the deepest folder the prefix names, then filter by the full prefix.
    const slash = prefix.lastIndexOf('/');
    const dirKey = slash >= 0 ? prefix.slice(0, slash) : '';
    const start = dirKey === '' ? this.root : this.pathOf(dirKey);
    yield* this.#walk(start, dirKey, prefix);
  }

  async *#walk(dir: string, dirKey: string, prefix: string): AsyncIterable<ObjectInfo> {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return;
      throw err;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name.endsWith('.tmp')) continue;
      const key = dirKey === '' ? e.name : `${dirKey}/${e.name}`;
      if (e.isDirectory()) {
        if (prefix.startsWith(key + '/') || key.startsWith(prefix) || (key + '/').startsWith(prefix)) {
          yield* this.#walk(path.join(dir, e.name), key, prefix);
        }
      } else if (e.isFile() && key.startsWith(prefix)) {
        const s = await stat(path.join(dir, e.name)).catch(() => undefined);
        if (s) yield infoOf(key, s.size, s.mtimeMs, s.ino);
      }
    }
  }

  async presignPut(key: string, options: PresignOptions): Promise<PresignedRequest> {
    return this.#presign('PUT', key, options);
  }

  async presignGet(key: string, options: PresignOptions): Promise<PresignedRequest> {
    return this.#presign('GET', key, { expiresIn: options.expiresIn });
  }

  #presign(method: 'GET' | 'PUT', key: string, options: PresignOptions): PresignedRequest {
    checkObjectKey(key);
    if (!this.#signer || !this.#baseUrl) throw new Error('this folder store has no signing secret or base URL: presigned URLs are unavailable');
    const expires = Math.floor(this.#clock.now().getTime() / 1000) + options.expiresIn;
    const claims = { method, key, expires, size: options.contentLength, sha256: options.sha256?.toLowerCase(), crc32: options.sha256 ? undefined : options.crc32?.toLowerCase() };
    const query = new URLSearchParams({ expires: String(expires) });
    if (claims.size !== undefined) query.set('size', String(claims.size));
    if (claims.sha256) query.set('sha256', claims.sha256);
    if (claims.crc32) query.set('crc32', claims.crc32);
    query.set('sig', this.#signer.signUrl(claims));
    return { url: `${this.publicUrl(key)}?${query}`, method, headers: {}, expiresAt: new Date(expires * 1000) };
  }

  /** The folder of an upload's parts, beside its key: `<key>.parts-<uploadId>/`. */
  #partsKey(key: string, uploadId: string): string {
    if (!UPLOAD_ID.test(uploadId)) throw new RangeError('invalid multipart upload id');
    return `${checkObjectKey(key)}.parts-${uploadId}`;
  }

  #partKey(key: string, uploadId: string, partNumber: number): string {
    if (!Number.isInteger(partNumber) || partNumber < 1 || partNumber > MAX_PARTS) throw new RangeError(`invalid part number ${partNumber}`);
    return `${this.#partsKey(key, uploadId)}/${String(partNumber).padStart(5, '0')}`;
  }

  async createMultipart(key: string, layout?: MultipartLayout): Promise<string> {
    const uploadId = randomBytes(12).toString('hex');
    const dir = this.pathOf(this.#partsKey(key, uploadId));
    await mkdir(dir, { recursive: true });
    if (layout) await this.#inPlace.create(dir, layout);
    return uploadId;
  }

  /** Parts go up through the same signed PUT as whole objects: each is checked against its size and its CRC-32 (or SHA-256). */
  async presignPart(key: string, uploadId: string, partNumber: number, options: PresignOptions): Promise<PresignedRequest> {
    return this.#presign('PUT', this.#partKey(key, uploadId, partNumber), options);
  }

  async listParts(key: string, uploadId: string): Promise<PartInfo[] | undefined> {
    const dir = this.pathOf(this.#partsKey(key, uploadId));
    const layout = readLayout(dir);
    if (layout) return this.#inPlace.listParts(dir, layout).catch((err: unknown) => (isMissing(err) ? undefined : Promise.reject(err)));
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    const parts: PartInfo[] = [];
    for (const name of names.filter((n) => /^\d{5}$/.test(n)).sort()) {
      const s = await stat(path.join(dir, name)).catch(() => undefined);
      if (s?.isFile()) parts.push({ partNumber: Number(name), size: s.size, etag: infoOf(name, s.size, s.mtimeMs, s.ino).etag });
    }
    return parts;
  }

  /**
   * Parts written in place: the file is read once to hash it and renamed into place when size and hash are the
   * promised ones (`folder-multipart.ts`). Parts of one file each (an upload started without a layout): they are
   * copied in order into a temporary file beside the target, hashed on the way, and renamed the same way.
   */
  async completeMultipart(key: string, uploadId: string, partCount: number, target: MultipartTarget): Promise<ObjectInfo> {
    const dir = this.pathOf(this.#partsKey(key, uploadId));
    const layout = readLayout(dir);
    if (!layout && !(await isFolder(dir))) throw new MultipartUploadGoneError(key);
    if (layout) {
      const file = this.pathOf(target.key);
      await mkdir(path.dirname(file), { recursive: true });
      await this.#inPlace.complete(dir, layout, partCount, file, target);
      const s = await stat(file);
      return infoOf(target.key, s.size, s.mtimeMs, s.ino);
    }
    const partFiles = Array.from({ length: partCount }, (_, i) => this.pathOf(this.#partKey(key, uploadId, i + 1)));
    const file = this.pathOf(target.key);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const options = { contentLength: target.size, sha256: target.sha256 };
      const written = await writeObjectFile(concatenated(partFiles), tmp, options, !this.#directRefused);
      if (written.directRefused) this.#directRefused = true;
      checkWritten(options, written);
      await rename(tmp, file);
    } catch (err) {
      await rm(tmp, { force: true });
      // A part file gone: another complete (or an abort) took the upload meanwhile.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new MultipartUploadGoneError(key, { cause: err });
      throw err;
    } finally {
      await this.abortMultipart(key, uploadId);
    }
    const s = await stat(file);
    return infoOf(target.key, s.size, s.mtimeMs, s.ino);
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    await this.#inPlace.remove(this.pathOf(this.#partsKey(key, uploadId)));
  }

  publicUrl(key: string): string {
    return `${this.#baseUrl ?? ''}/objects/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  async close(): Promise<void> {
    await Promise.all([this.#inPlace.close(), this.#chunks.close()]);
  }
}

/** The folder store's upload ids: 24 hex digits, so an id can never name another folder. */
const UPLOAD_ID = /^[0-9a-f]{24}$/;
/** The key of a part: `<key>.parts-<upload id>/<part number, 5 digits>`. */
const PART_KEY = /\.parts-[0-9a-f]{24}\/(\d{5})$/;

/**
 * The bytes of `files`, one after the other, read in 1 MiB chunks into one reused buffer: `writeObjectFile`
 * copies each chunk into its staging buffers before it asks for the next, and fresh buffers a chunk (a read
 * stream's) cost the garbage collector more than the copy.
 */
async function* concatenated(files: string[]): AsyncIterable<Uint8Array> {
  const buffer = Buffer.allocUnsafe(1 << 20);
  for (const f of files) {
    const handle = await open(f, 'r');
    try {
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  }
}

function infoOf(key: string, size: number, mtimeMs: number, ino: number): ObjectInfo {
  // Size, mtime and inode change with every atomic replace, so the tag changes with the content.
  const etag = `"${size.toString(16)}-${Math.floor(mtimeMs * 1000).toString(16)}-${ino.toString(16)}"`;
  return { key, size, etag, lastModified: new Date(mtimeMs) };
}

async function isFolder(dir: string): Promise<boolean> {
  return stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** A key that names a folder of the store (a prefix of other keys), not an object. */
function isDirectory(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'EISDIR';
}

/**
 * The file of a key is not there: no such file, or a file where the key has a folder (`index.json/x`:
 * ENOTDIR), or a name the filesystem cannot hold (ENAMETOOLONG, past what `checkObjectKey` bounds).
 */
function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG';
}
