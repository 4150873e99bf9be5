/**
 * The S3-compatible object store (AWS S3, R2, MinIO, Ceph radosgw...), selected by
 * `OBJECT_STORE_URL=s3://<bucket>?endpoint=<url>&region=<region>&access_key=<id>&secret_key=<secret>`.
 * Without `access_key`/`secret_key` the SDK's default chain is used (AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY, a profile, an instance role). Path-style addressing, so any endpoint works.
 */
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  ListPartsCommand,
  PutObjectTaggingCommand,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { sha256Hex } from '../core/secrets.js';
import { hashHttpBody } from './hash-http-body.js';
import { readBody } from './read-object.js';
import { PRIVATE_READ_VALUE, PUBLIC_READ_TAG } from './public-read.js';
import {
  MultipartPartMissingError,
  MultipartUploadGoneError,
  checkObjectKey,
  ContentMismatchError,
  type ByteRange,
  MAX_PART_BYTES,
  MAX_PARTS,
  type MultipartTarget,
  type ObjectBody,
  type PartInfo,
  type ObjectInfo,
  type ObjectStore,
  type PresignedRequest,
  type PresignOptions,
  type PutOptions,
} from './object-store.js';

export interface S3Location {
  bucket: string;
  endpoint: string | undefined;
  region: string;
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** Base for `publicUrl`; defaults to `<endpoint>/<bucket>`. */
  publicBase: string | undefined;
}

/** Reads an `s3://bucket?endpoint=...` URL; throws `RangeError` naming what is wrong. */
export function parseS3Url(url: string): S3Location {
  const u = new URL(url);
  if (u.protocol !== 's3:' || !u.hostname) throw new RangeError('expected s3://<bucket>?endpoint=...');
  const q = u.searchParams;
  const endpoint = q.get('endpoint') ?? undefined;
  if (endpoint !== undefined && !/^https?:\/\//.test(endpoint)) throw new RangeError(`endpoint must be an http(s) URL, got "${endpoint}"`);
  const accessKeyId = q.get('access_key') ?? undefined;
  const secretAccessKey = q.get('secret_key') ?? undefined;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) throw new RangeError('access_key and secret_key go together');
  return {
    bucket: u.hostname,
    endpoint: endpoint?.replace(/\/+$/, ''),
    region: q.get('region') ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    publicBase: q.get('public_base')?.replace(/\/+$/, '') ?? undefined,
  };
}

/** Bodies above this size go up in parts (S3 multipart upload), a part at a time in memory. */
const PART_SIZE = 8 * 1024 * 1024;
/** How long a plain read (an assembled upload's read-back, a copy to a file) waits for bytes before the SDK's read. */
const READ_BACK_IDLE_MS = 60_000;

export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  readonly partChecksum = 'sha256' as const;
  readonly bucket: string;
  readonly #client: S3Client;
  readonly #location: S3Location;

  constructor(location: S3Location) {
    this.#location = location;
    this.bucket = location.bucket;
    this.#client = new S3Client({
      region: location.region,
      endpoint: location.endpoint,
      forcePathStyle: true,
      credentials: location.accessKeyId ? { accessKeyId: location.accessKeyId, secretAccessKey: location.secretAccessKey! } : undefined,
      // S3-compatible servers (radosgw, MinIO) predate the SDK's default CRC checksums.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  static fromUrl(url: string): S3ObjectStore {
    return new S3ObjectStore(parseS3Url(url));
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    checkObjectKey(key);
    try {
      const r = await this.#client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { key, size: r.ContentLength ?? 0, etag: r.ETag ?? '""', lastModified: r.LastModified ?? new Date(0), contentType: r.ContentType };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectBody | undefined> {
    checkObjectKey(key);
    try {
      const r = await this.#client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      // A ranged answer's Content-Length is the range's; the object's size is after the slash of Content-Range.
      const total = r.ContentRange ? Number(r.ContentRange.split('/')[1]) : (r.ContentLength ?? 0);
      const info = { key, size: total, etag: r.ETag ?? '""', lastModified: r.LastModified ?? new Date(0), contentType: r.ContentType };
      return { info, body: r.Body as Readable };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async readAll(key: string): Promise<Buffer | undefined> {
    const found = await this.get(key);
    return found ? readBody(found.body) : undefined;
  }

  async put(key: string, body: Readable | Uint8Array | string, options: PutOptions = {}): Promise<ObjectInfo> {
    checkObjectKey(key);
    // The tag comes with the write itself (x-amz-tagging): the object is never public untagged, nor the reverse.
    const Tagging = options.publicRead ? `${PUBLIC_READ_TAG.key}=${PUBLIC_READ_TAG.value}` : undefined;
    if (typeof body === 'string' || body instanceof Uint8Array) {
      const bytes = Buffer.from(body);
      checkContent(options, bytes.length, options.sha256 ? sha256Hex(bytes) : undefined);
      await this.#client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentLength: bytes.length, ContentType: options.contentType, Tagging }));
    } else {
      // Streamed: lib-storage writes the key only once the body has ended (one PutObject, or the completion of
      // a multipart upload, which a failure aborts), and the body ends only once it is what was promised. So
      // other bytes never appear at the key, and a refused write leaves what a good one put there meanwhile.
      const verified = body.pipe(endingWhenVerified(options));
      body.once('error', (err) => verified.destroy(err));
      const upload = new Upload({
        client: this.#client,
        params: { Bucket: this.bucket, Key: key, Body: verified, ContentType: options.contentType, Tagging },
        partSize: PART_SIZE,
        queueSize: 2,
      });
      await upload.done();
      // radosgw (Ceph 16) drops x-amz-tagging on CreateMultipartUpload: a body that went in parts is tagged here,
      // and is until then not public (the safe side).
      if (options.publicRead) await this.setPublicRead(key, true);
    }
    const info = await this.head(key);
    if (!info) throw new Error(`object ${key} vanished right after it was written`);
    return info;
  }

  async setPublicRead(key: string, publicRead: boolean): Promise<void> {
    checkObjectKey(key);
    const Value = publicRead ? PUBLIC_READ_TAG.value : PRIVATE_READ_VALUE;
    try {
      await this.#client.send(new PutObjectTaggingCommand({ Bucket: this.bucket, Key: key, Tagging: { TagSet: [{ Key: PUBLIC_READ_TAG.key, Value }] } }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async delete(key: string): Promise<void> {
    checkObjectKey(key);
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    let n = 0;
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const r = await this.#client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
      if (r.Errors?.length) throw new Error(`could not delete ${r.Errors.length} objects under ${prefix}: ${r.Errors[0].Code} ${r.Errors[0].Key}`);
      n += batch.length;
      batch = [];
    };
    // DeleteObjects takes at most 1000 keys a request.
    for await (const info of this.list(prefix)) {
      batch.push(info.key);
      if (batch.length === 1000) await flush();
    }
    await flush();
    return n;
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    let token: string | undefined;
    do {
      const r = await this.#client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of r.Contents ?? []) {
        if (o.Key) yield { key: o.Key, size: o.Size ?? 0, etag: o.ETag ?? '""', lastModified: o.LastModified ?? new Date(0) };
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
  }

  async presignPut(key: string, options: PresignOptions): Promise<PresignedRequest> {
    checkObjectKey(key);
    const expiresAt = new Date(Date.now() + options.expiresIn * 1000);
    if (options.sha256 === undefined) {
      const url = await getSignedUrl(this.#client, new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentLength: options.contentLength }), {
        expiresIn: options.expiresIn,
        signableHeaders: options.contentLength === undefined ? undefined : new Set(['content-length']),
      });
      return { url, method: 'PUT', headers: {}, expiresAt };
    }
    return this.#presignSha256Put(key, {}, options.sha256, options.contentLength, options.expiresIn);
  }

  /**
   * The S3 presigner always signs UNSIGNED-PAYLOAD; signing the body's own SHA-256 instead makes the server
   * (SigV4: x-amz-content-sha256) refuse any other content, and signing Content-Length any other size.
   */
  async #presignSha256Put(key: string, query: Record<string, string>, sha256: string, contentLength: number | undefined, expiresIn: number): Promise<PresignedRequest> {
    const expiresAt = new Date(Date.now() + expiresIn * 1000);
    const endpoint = new URL(this.#location.endpoint ?? `https://s3.${this.#location.region}.amazonaws.com`);
    const pathName = `${endpoint.pathname.replace(/\/+$/, '')}/${this.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
    const headers: Record<string, string> = { host: endpoint.host, 'x-amz-content-sha256': sha256.toLowerCase() };
    if (contentLength !== undefined) headers['content-length'] = String(contentLength);
    const signer = new SignatureV4({
      credentials: this.#client.config.credentials,
      region: this.#location.region,
      service: 's3',
      sha256: this.#client.config.sha256,
      uriEscapePath: false,
    });
    const signed = await signer.presign(
      { method: 'PUT', protocol: endpoint.protocol, hostname: endpoint.hostname, port: endpoint.port ? Number(endpoint.port) : undefined, path: pathName, headers, query },
      { expiresIn, unhoistableHeaders: new Set(['x-amz-content-sha256']), signableHeaders: new Set(['content-length']) },
    );
    const search = new URLSearchParams(signed.query as Record<string, string>).toString();
    const { host: _host, ...mustSend } = headers;
    return { url: `${endpoint.origin}${pathName}?${search}`, method: 'PUT', headers: mustSend, expiresAt };
  }

  async createMultipart(key: string): Promise<string> {
    checkObjectKey(key);
    const r = await this.#client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: key }));
    if (!r.UploadId) throw new Error(`the store gave no upload id for ${key}`);
    return r.UploadId;
  }

  /** A part's URL signs its SHA-256 and length: the store refuses a part damaged on the way. */
  async presignPart(key: string, uploadId: string, partNumber: number, options: PresignOptions): Promise<PresignedRequest> {
    checkObjectKey(key);
    if (!options.sha256) throw new RangeError('a part URL needs the part\'s SHA-256');
    return this.#presignSha256Put(key, { partNumber: String(partNumber), uploadId }, options.sha256, options.contentLength, options.expiresIn);
  }

  async listParts(key: string, uploadId: string): Promise<PartInfo[] | undefined> {
    checkObjectKey(key);
    const parts: PartInfo[] = [];
    let marker: string | undefined;
    try {
      for (;;) {
        const r = await this.#client.send(new ListPartsCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId, PartNumberMarker: marker }));
        for (const p of r.Parts ?? []) parts.push({ partNumber: p.PartNumber ?? 0, size: p.Size ?? 0, etag: p.ETag ?? '""' });
        if (!r.IsTruncated) break;
        marker = r.NextPartNumberMarker;
      }
    } catch (err) {
      if (isNoSuchUpload(err)) return undefined;
      throw err;
    }
    return parts;
  }

  /**
   * S3 assembles the parts at `key` (a staging key nothing reads); nds then reads the whole object once to
   * hash it, and only a match is copied to the target (a copy within the bucket, in ranges past 5 GiB) and
   * the staging object deleted. Per-part checksums would not give the file's SHA-256.
   */
  async completeMultipart(key: string, uploadId: string, partCount: number, target: MultipartTarget): Promise<ObjectInfo> {
    checkObjectKey(key);
    checkObjectKey(target.key);
    const parts = await this.listParts(key, uploadId);
    if (!parts) throw new MultipartUploadGoneError(key);
    const byNumber = new Map(parts.map((p) => [p.partNumber, p]));
    const chosen = Array.from({ length: partCount }, (_, i) => byNumber.get(i + 1));
    const missing = chosen.flatMap((p, i) => (p ? [] : [i + 1]));
    if (missing.length > 0) throw new MultipartPartMissingError(key, missing);
    await this.#client.send(
      new CompleteMultipartUploadCommand({
        Bucket: this.bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: chosen.map((p) => ({ PartNumber: p!.partNumber, ETag: p!.etag })) },
      }),
    );
    try {
      const { size, sha256 } = await this.#hashObject(key);
      checkContent({ contentLength: target.size, sha256: target.sha256 }, size, sha256);
      const copied = await this.#copy(key, target.key, size);
      // What the copy answered is the target's metadata: no HEAD of it after.
      if (copied) return { key: target.key, size, etag: copied.etag, lastModified: copied.lastModified };
    } finally {
      await this.delete(key);
    }
    const info = await this.head(target.key);
    if (!info) throw new Error(`object ${target.key} vanished right after it was written`);
    return info;
  }

  /**
   * The size and SHA-256 of the object at `key`, read once: over one plain GET (`#readPlain`), or through the
   * SDK's stream where that read is not possible or failed part-way (then read again whole).
   */
  async #hashObject(key: string): Promise<{ size: number; sha256: string }> {
    const plain = await this.#readPlain(key);
    if (plain) return plain;
    const found = await this.get(key);
    if (!found) throw new Error(`object ${key} vanished right after it was assembled`);
    const hash = createHash('sha256');
    let size = 0;
    for await (const chunk of found.body) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
    return { size, sha256: hash.digest('hex') };
  }

  /**
   * Writes the object at `key` into the new file `file` over one plain GET and answers its size and SHA-256.
   * Undefined when that read is not possible or failed (no such object, an answer other than a plain 200, a
   * cut): the file is then removed, and the caller reads through `get`.
   */
  async copyToNewFile(key: string, file: string): Promise<{ size: number; sha256: string } | undefined> {
    const handle = await open(file, 'wx');
    let copied: { size: number; sha256: string } | undefined;
    try {
      copied = await this.#readPlain(key, (bytes) => writeAllSync(handle.fd, bytes));
    } finally {
      await handle.close();
      if (!copied) await rm(file, { force: true });
    }
    return copied;
  }

  /**
   * The object at `key` read over a presigned GET into one reused buffer (`hash-http-body.ts`, decision 0050),
   * each piece handed to `onBytes`; undefined when that read is not possible or failed, whatever the reason: the
   * SDK's own read (its retries, its errors) decides then.
   */
  async #readPlain(key: string, onBytes?: (bytes: Buffer) => void): Promise<{ size: number; sha256: string } | undefined> {
    const { url } = await this.presignGet(key, { expiresIn: 15 * 60 });
    return hashHttpBody(url, { idleMs: READ_BACK_IDLE_MS, onBytes }).catch(() => undefined);
  }

  /**
   * A copy within the bucket: one CopyObject up to 5 GiB (radosgw shares the data, 0.05 s for 256 MiB here;
   * decision 0037), ranges of a multipart copy beyond. Answers the copy's entity tag and time when it gave both.
   */
  async #copy(from: string, to: string, size: number): Promise<{ etag: string; lastModified: Date } | undefined> {
    const CopySource = `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`;
    if (size <= MAX_PART_BYTES) {
      const r = await this.#client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource }));
      const { ETag, LastModified } = r.CopyObjectResult ?? {};
      // radosgw answers the copy's entity tag unquoted; a HEAD's, as HTTP has it, quoted.
      return ETag && LastModified ? { etag: ETag.startsWith('"') ? ETag : `"${ETag}"`, lastModified: LastModified } : undefined;
    }
    const rangeBytes = Math.max(512 * 1024 ** 2, Math.ceil(size / MAX_PARTS));
    const uploadId = await this.createMultipart(to);
    try {
      const Parts: Array<{ PartNumber: number; ETag: string | undefined }> = [];
      for (let start = 0, n = 1; start < size; start += rangeBytes, n++) {
        const end = Math.min(size, start + rangeBytes) - 1;
        const r = await this.#client.send(new UploadPartCopyCommand({ Bucket: this.bucket, Key: to, UploadId: uploadId, PartNumber: n, CopySource, CopySourceRange: `bytes=${start}-${end}` }));
        Parts.push({ PartNumber: n, ETag: r.CopyPartResult?.ETag });
      }
      await this.#client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId: uploadId, MultipartUpload: { Parts } }));
      return undefined;
    } catch (err) {
      await this.abortMultipart(to, uploadId).catch(() => undefined);
      throw err;
    }
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    checkObjectKey(key);
    try {
      await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: key, UploadId: uploadId }));
    } catch (err) {
      if (!isNoSuchUpload(err)) throw err;
    }
  }

  async presignGet(key: string, options: PresignOptions): Promise<PresignedRequest> {
    checkObjectKey(key);
    const url = await getSignedUrl(this.#client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: options.expiresIn });
    return { url, method: 'GET', headers: {}, expiresAt: new Date(Date.now() + options.expiresIn * 1000) };
  }

  publicUrl(key: string): string {
    const base = this.#location.publicBase ?? `${this.#location.endpoint ?? `https://s3.${this.#location.region}.amazonaws.com`}/${this.bucket}`;
    return `${base}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }
}

/**
 * Passes a body through but lets it end only when its size and SHA-256 are the promised ones; otherwise it fails
 * with `ContentMismatchError` instead of ending (at once, on the first byte past a promised size). The newest
 * chunk is held back until then, so a writer that commits as soon as it has the promised length commits nothing
 * unverified either.
 */
function endingWhenVerified(promised: PutOptions): Transform {
  const hash = promised.sha256 === undefined ? undefined : createHash('sha256');
  let size = 0;
  let held: Buffer | undefined;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (promised.contentLength !== undefined && size > promised.contentLength) {
        done(new ContentMismatchError({ size: promised.contentLength }, { size }));
        return;
      }
      hash?.update(chunk);
      const previous = held;
      held = chunk;
      done(null, previous);
    },
    flush(done) {
      try {
        checkContent(promised, size, hash?.digest('hex'));
      } catch (err) {
        done(err as ContentMismatchError);
        return;
      }
      done(null, held);
    },
  });
}

function checkContent(options: PutOptions, size: number, sha256: string | undefined): void {
  if (options.contentLength !== undefined && size !== options.contentLength) throw new ContentMismatchError({ size: options.contentLength }, { size, sha256 });
  if (options.sha256 !== undefined && sha256 !== options.sha256.toLowerCase()) throw new ContentMismatchError({ sha256: options.sha256 }, { size, sha256 });
}

function isNoSuchUpload(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchUpload' || e?.$metadata?.httpStatusCode === 404;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/** Writes all of `bytes` at the file's position (a short write goes on). */
function writeAllSync(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}
