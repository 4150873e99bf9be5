/**
 * The object store behind nds: a folder (embedded default) or an S3-compatible bucket.
 * Keys are `/`-separated paths such as `nd000001/zarr/index.json`; the folder store keeps the object of
 * key `<key>` at `<folder>/<key>`, the same layout as the bucket, so the two can be synced with ordinary tools.
 */
import type { Readable } from 'node:stream';

export interface ObjectInfo {
  key: string;
  size: number;
  /** Strong entity tag, quoted as in HTTP (`"..."`). */
  etag: string;
  lastModified: Date;
  contentType?: string;
}

/** An inclusive byte range, as in HTTP `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface ObjectBody {
  info: ObjectInfo;
  /** The bytes of the object, or of the range asked for. */
  body: Readable;
}

export interface PutOptions {
  contentType?: string;
  /** When given, a body of another length is refused (`ContentMismatchError`) and nothing is stored. */
  contentLength?: number;
  /**
   * Hex SHA-256 the body must have; on a mismatch the store throws `ContentMismatchError`, keeps nothing of the
   * body, and leaves what the key held before (no reader ever sees other bytes there).
   */
  sha256?: string;
  /** Hex CRC-32 (zlib's, 8 digits) the body must have, checked as `sha256` is; the folder store's parts (decision 0032). */
  crc32?: string;
  /**
   * Open the object to anonymous reads at the store's public base (an S3 store tags it, `public-read.ts`);
   * left out, it is not public there. A folder store has no anonymous base of its own and ignores it.
   */
  publicRead?: boolean;
}

export interface PresignOptions {
  /** Seconds the URL stays valid. */
  expiresIn: number;
  /** PUT only: the exact body length the URL accepts. */
  contentLength?: number;
  /** PUT only: the hex SHA-256 the body must have; the store refuses other content. */
  sha256?: string;
  /** PUT only: the hex CRC-32 the body must have (a folder store's part URL; an S3 store ignores it). */
  crc32?: string;
}

/** A URL that lets its holder read or write one object without other credentials, until `expiresAt`. */
export interface PresignedRequest {
  url: string;
  method: 'GET' | 'PUT';
  /** Headers the request must carry exactly as given (they are part of the signature). */
  headers: Record<string, string>;
  expiresAt: Date;
}

/** A body whose length or SHA-256 is not what the writer promised; nothing was stored. */
export class ContentMismatchError extends Error {
  readonly expected: { size?: number; sha256?: string; crc32?: string };
  readonly actual: { size: number; sha256?: string; crc32?: string };
  constructor(expected: { size?: number; sha256?: string; crc32?: string }, actual: { size: number; sha256?: string; crc32?: string }) {
    const what =
      expected.size !== undefined && expected.size !== actual.size
        ? `size ${actual.size}, expected ${expected.size}`
        : expected.sha256 !== undefined
          ? `sha256 ${actual.sha256}, expected ${expected.sha256}`
          : `crc32 ${actual.crc32}, expected ${expected.crc32}`;
    super(`content does not match: ${what}`);
    this.name = 'ContentMismatchError';
    this.expected = expected;
    this.actual = actual;
  }
}

/** The multipart upload is no longer open (completed or aborted, by a racing request perhaps): nothing was stored. */
export class MultipartUploadGoneError extends Error {
  constructor(key: string, options?: ErrorOptions) {
    super(`the multipart upload of ${key} is no longer open`, options);
    this.name = 'MultipartUploadGoneError';
  }
}

/** Completion named parts the store does not hold (a part sent again was lost on the way): the upload stays open. */
export class MultipartPartMissingError extends Error {
  readonly missing: number[];
  constructor(key: string, missing: number[]) {
    super(`the multipart upload of ${key} lacks ${missing.length > 0 ? `parts ${missing.slice(0, 20).join(', ')}` : 'the parts named'}`);
    this.name = 'MultipartPartMissingError';
    this.missing = missing;
  }
}

/** The shape of a multipart upload's object, when known at its start: a folder store writes parts in place by it. */
export interface MultipartLayout {
  /** Bytes of the whole object. */
  size: number;
  /** Bytes of every part but the last. */
  partSize: number;
}

/** A part of a multipart upload the store holds. */
export interface PartInfo {
  partNumber: number;
  size: number;
  etag: string;
}

/** Where a multipart upload's assembled bytes go, and what they must be. */
export interface MultipartTarget {
  key: string;
  size: number;
  /** Hex SHA-256 of the whole object, checked over the assembled bytes before anything appears at `key`. */
  sha256: string;
}

/** Most parts of one multipart upload (S3's limit), and the range of part sizes S3 takes. */
export const MAX_PARTS = 10_000;
export const MIN_PART_BYTES = 5 * 1024 ** 2;
export const MAX_PART_BYTES = 5 * 1024 ** 3;
/** The largest object (S3's limit): 5 TiB. */
export const MAX_OBJECT_BYTES = 5 * 1024 ** 4;

export interface ObjectStore {
  readonly kind: 'file' | 's3';
  /** Metadata of an object; `undefined` when there is none. */
  head(key: string): Promise<ObjectInfo | undefined>;
  /** Streams an object (or a range of it); `undefined` when there is none. The range must lie inside the object. */
  get(key: string, range?: ByteRange): Promise<ObjectBody | undefined>;
  /**
   * An object's bytes in one buffer; `undefined` when there is none. For the small documents nds keeps in the
   * store (manifests, `index.json`, Zarr metadata, chunks); large content is streamed with `get` instead. A
   * file is read in one call, which costs a sixth of a stream's reads and buffer joins.
   */
  readAll(key: string): Promise<Buffer | undefined>;
  /** Writes an object whole: readers see the old object or the new one, never a part. */
  put(key: string, body: Readable | Uint8Array | string, options?: PutOptions): Promise<ObjectInfo>;
  /** Deletes one object; deleting a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** Deletes every object whose key starts with `prefix`; returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** Every object whose key starts with `prefix`, in key order. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /**
   * A URL that writes one object without other credentials. With `contentLength`/`sha256`, the store
   * refuses any other body and keeps nothing of it.
   */
  presignPut(key: string, options: PresignOptions): Promise<PresignedRequest>;
  /** A URL that reads one object (Range allowed) without other credentials. */
  presignGet(key: string, options: PresignOptions): Promise<PresignedRequest>;
  /** Where the object can be read without signing when it is public (`publicRead`). */
  publicUrl(key: string): string;
  /**
   * Opens an object to anonymous reads at the store's public base, or closes it again; a missing object is
   * no error. Only a store whose public base serves objects by such a mark has it (S3: the object's tag);
   * without it, the public base is the nds server's `/objects/` routes, which ask the database.
   */
  setPublicRead?(key: string, publicRead: boolean): Promise<void>;
  /**
   * Starts a multipart upload whose parts are kept under `key` (which nothing reads until completion);
   * returns the store's id of it. S3: a multipart upload of `key`; folder store: a folder beside `key`, where
   * with `layout` each part is written in place at its offset in one file of the object's size (then parts
   * must have the layout's sizes, and completion reads the bytes once, to hash them, and renames the file).
   */
  createMultipart(key: string, layout?: MultipartLayout): Promise<string>;
  /**
   * What a part URL binds the part to besides its size: `sha256` (S3: the signed `x-amz-content-sha256`), or
   * `crc32`, a cheaper check against damage on the way (folder store, decision 0032; a URL bound to a SHA-256
   * is still taken). The whole file's SHA-256 is checked at completion either way.
   */
  readonly partChecksum: 'sha256' | 'crc32';
  /** A URL that writes part `partNumber` (1-based); with `contentLength` and `sha256` or `crc32` the store refuses other bytes. */
  presignPart(key: string, uploadId: string, partNumber: number, options: PresignOptions): Promise<PresignedRequest>;
  /** The parts stored so far, by part number; `undefined` when the store knows no such upload. */
  listParts(key: string, uploadId: string): Promise<PartInfo[] | undefined>;
  /**
   * Assembles parts 1..`partCount` and puts the result at `target.key` only when it has `target.size` bytes
   * and SHA-256 `target.sha256` (otherwise `ContentMismatchError`, and nothing at `target.key`); readers of
   * `target.key` see no object or the whole one. The upload is gone afterwards, either way.
   */
  completeMultipart(key: string, uploadId: string, partCount: number, target: MultipartTarget): Promise<ObjectInfo>;
  /** Drops an upload and its parts; an unknown upload is no error. */
  abortMultipart(key: string, uploadId: string): Promise<void>;
  /** Releases connections and handles. */
  close(): Promise<void>;
}

/** Longest key, in UTF-8 bytes: S3's limit, and well within a folder store's path limit. */
export const MAX_OBJECT_KEY_BYTES = 1024;
/** Longest segment of a key, in UTF-8 bytes: a file name of the folder store (NAME_MAX of Linux and macOS). */
export const MAX_OBJECT_SEGMENT_BYTES = 255;

/**
 * What is wrong with a key, or `undefined`: it must be relative and `/`-separated, with no empty, `.` or `..`
 * segment, no backslash or NUL, at most 1024 bytes, each segment at most 255 bytes. Both stores hold the same
 * keys, so that a key one store refuses (`ENAMETOOLONG`) the other refuses too.
 */
export function objectKeyProblem(key: string): string | undefined {
  if (key.length === 0) return 'empty key';
  if (key.includes('\\') || key.includes('\0')) return 'backslash or NUL in the key';
  if (Buffer.byteLength(key) > MAX_OBJECT_KEY_BYTES) return `key longer than ${MAX_OBJECT_KEY_BYTES} bytes`;
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return 'empty, . or .. segment';
    if (segment.length > MAX_OBJECT_SEGMENT_BYTES / 3 && Buffer.byteLength(segment) > MAX_OBJECT_SEGMENT_BYTES) return `segment longer than ${MAX_OBJECT_SEGMENT_BYTES} bytes`;
  }
  return undefined;
}

/** Checks a key (`objectKeyProblem`); throws `RangeError` otherwise, so no key can escape the store's root. */
export function checkObjectKey(key: string): string {
  const problem = objectKeyProblem(key);
  if (problem) throw new RangeError(`invalid object key (${problem}): ${JSON.stringify(key.slice(0, 200))}`);
  return key;
}
