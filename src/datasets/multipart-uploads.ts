/**
 * Uploads of large files in parts (decision 0020). A file of at least UPLOAD_PART_THRESHOLD bytes goes up as
 * numbered parts, each through its own presigned URL bound to the part's size and SHA-256, or CRC-32 on the
 * folder store (decision 0032; the store refuses a part damaged on the way, and only that part is sent again);
 * the parts are assembled by the store, and the whole file's SHA-256, the one the manifest will name, is checked over the assembled bytes before the content
 * key `<id>/objects/<sha256>` is written. Nothing of an unfinished or refused upload is ever at a content key.
 *
 * An upload's record is a small object beside its parts, `uploads/<dataset>/<upload id>/upload.json`, outside
 * the dataset's prefix (no read or write credential of the dataset covers it); the upload id is 128 random
 * bits. The parts and the staging object live under the same prefix; `sweepStaleUploads` drops uploads older
 * than UPLOAD_STALE_AFTER_S.
 */
import { randomBytes } from 'node:crypto';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { ContentMismatchError, MultipartPartMissingError, MultipartUploadGoneError, MAX_OBJECT_BYTES, MAX_PART_BYTES, MAX_PARTS, type PresignedRequest } from '../objects/object-store.js';
import { contentKey } from './manifest.js';
import { contentGrantKey, countStoredContent, moveStorage, releaseStorage, reserveStorage, sweepStorageGrants, uploadGrantKey } from './storage-quota.js';
import { UPLOAD_URL_TTL_S } from './uploads.js';
import { runPeriodically, type Periodic } from '../core/periodic.js';

type UploadDeps = Pick<Deps, 'objects' | 'config' | 'clock' | 'db'>;

export const UPLOAD_ID = /^[0-9a-f]{32}$/;
const MIB = 1024 ** 2;

export interface UploadRecord {
  upload_id: string;
  dataset_id: string;
  /** Who started it. */
  user_id: number;
  path: string;
  size: number;
  /** The SHA-256 the client named when it started, if it knew it then; otherwise given at completion. */
  sha256: string | null;
  part_size: number;
  part_count: number;
  /** The store's own id of the multipart upload. */
  store_upload_id: string;
  created_at: string;
}

export type StartedUpload = { status: 'present'; path: string; size: number; sha256: string } | ({ status: 'parts'; expires_at: string; part_checksum: 'sha256' | 'crc32' } & UploadRecord);

/**
 * The part size of a file: the configured one, or larger (whole MiB) when the file would need more than
 * 10,000 parts; a 5 TiB file gets parts of 525 MiB.
 */
export function partSizeFor(size: number, minPartSize: number): number {
  const needed = Math.ceil(Math.ceil(size / MAX_PARTS) / MIB) * MIB;
  return Math.min(MAX_PART_BYTES, Math.max(minPartSize, needed));
}

/** The size of part `n` (1-based) of an upload: `part_size`, except the last. */
export function partLength(record: Pick<UploadRecord, 'size' | 'part_size' | 'part_count'>, n: number): number {
  return n < record.part_count ? record.part_size : record.size - record.part_size * (record.part_count - 1);
}

function uploadPrefix(datasetId: string, uploadId: string): string {
  return `uploads/${datasetId}/${uploadId}/`;
}

const recordKey = (datasetId: string, uploadId: string) => `${uploadPrefix(datasetId, uploadId)}upload.json`;
/** Where the store keeps the parts, and (S3) assembles them before the hash is checked. */
const stagingKey = (datasetId: string, uploadId: string) => `${uploadPrefix(datasetId, uploadId)}object`;

function notFound(): NdsError {
  return new NdsError('upload_not_found');
}

export function expiresAt(config: Pick<Deps['config'], 'uploadStaleAfterS'>, record: Pick<UploadRecord, 'created_at'>): string {
  return new Date(Date.parse(record.created_at) + config.uploadStaleAfterS * 1000).toISOString();
}

/**
 * Starts an upload of one file for `userId`, or answers `present` when the content named by `sha256` is
 * stored already. `datasetId` must be one the caller may write (checked by the route).
 */
export async function startUpload(deps: UploadDeps, datasetId: string, userId: number, file: { path: string; size: number; sha256?: string }): Promise<StartedUpload> {
  if (file.sha256) {
    const existing = await deps.objects.head(contentKey(datasetId, file.sha256));
    if (existing && existing.size === file.size) {
      await countStoredContent(deps, datasetId, [{ sha256: file.sha256, size: file.size }]);
      return { status: 'present', path: file.path, size: file.size, sha256: file.sha256 };
    }
  }
  if (file.size < 1 || file.size > MAX_OBJECT_BYTES) throw new NdsError('validation_failed', { message: `A file uploaded in parts has 1 byte to 5 TiB; ${file.path} has ${file.size}.` });
  const uploadId = randomBytes(16).toString('hex');
  const partSize = partSizeFor(file.size, deps.config.uploadPartSize);
  const createdAt = deps.clock.now();
  // The file's room is granted before any part can be sent; an upload given up gives it back (the sweep).
  await reserveStorage(deps, datasetId, [{ key: uploadGrantKey(uploadId), bytes: file.size }], { expiresAt: new Date(createdAt.getTime() + deps.config.uploadStaleAfterS * 1000) });
  let storeUploadId: string;
  try {
    storeUploadId = await deps.objects.createMultipart(stagingKey(datasetId, uploadId), { size: file.size, partSize });
  } catch (err) {
    await releaseStorage(deps, datasetId, uploadGrantKey(uploadId)).catch(() => undefined);
    throw err;
  }
  const record: UploadRecord = {
    upload_id: uploadId,
    dataset_id: datasetId,
    user_id: userId,
    path: file.path,
    size: file.size,
    sha256: file.sha256 ?? null,
    part_size: partSize,
    part_count: Math.ceil(file.size / partSize),
    store_upload_id: storeUploadId,
    created_at: createdAt.toISOString(),
  };
  await deps.objects.put(recordKey(datasetId, uploadId), JSON.stringify(record), { contentType: 'application/json' });
  return { status: 'parts', ...record, expires_at: expiresAt(deps.config, record), part_checksum: deps.objects.partChecksum };
}

/** The record of an upload of `datasetId`, or `upload_not_found`. */
export async function findUpload(deps: UploadDeps, datasetId: string, uploadId: string): Promise<UploadRecord> {
  if (!UPLOAD_ID.test(uploadId)) throw notFound();
  const raw = await deps.objects.readAll(recordKey(datasetId, uploadId));
  if (!raw) throw notFound();
  const record = JSON.parse(raw.toString('utf8')) as UploadRecord;
  if (record.dataset_id !== datasetId || record.upload_id !== uploadId) throw notFound();
  // Past its time it is gone, whether or not the sweeper has been by.
  if (Date.parse(expiresAt(deps.config, record)) <= deps.clock.now().getTime()) throw notFound();
  return record;
}

/** The parts stored whole: those of the size their number calls for. */
export async function storedParts(deps: UploadDeps, record: UploadRecord): Promise<Array<{ part_number: number; size: number }>> {
  const parts = await deps.objects.listParts(stagingKey(record.dataset_id, record.upload_id), record.store_upload_id);
  if (!parts) throw notFound();
  return parts
    .filter((p) => p.partNumber >= 1 && p.partNumber <= record.part_count && p.size === partLength(record, p.partNumber))
    .map((p) => ({ part_number: p.partNumber, size: p.size }));
}

export interface PartUrl {
  part_number: number;
  size: number;
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expires_at: string;
}

/**
 * Presigned URLs (1 hour) of parts, each bound to the part's exact size and to the checksum the client names:
 * its SHA-256, or its CRC-32 where the store checks parts by CRC-32 (`partChecksum`, decision 0032).
 */
export async function partUrls(deps: UploadDeps, record: UploadRecord, parts: Array<{ part_number: number; sha256?: string; crc32?: string }>): Promise<PartUrl[]> {
  // Every part checked before any is signed: a request asking for a part it may not have gets no URL at all.
  for (const p of parts) {
    if (p.part_number > record.part_count) {
      throw new NdsError('validation_failed', { message: `Part ${p.part_number} is past the last part (${record.part_count}) of ${record.path}.` });
    }
    if (!p.sha256 && (!p.crc32 || deps.objects.partChecksum !== 'crc32')) {
      throw new NdsError('validation_failed', { message: `Part ${p.part_number} needs its ${deps.objects.partChecksum === 'crc32' ? 'CRC-32 or SHA-256' : 'SHA-256'}: this store checks each part by it.` });
    }
  }
  return Promise.all(
    parts.map(async (p): Promise<PartUrl> => {
      const size = partLength(record, p.part_number);
      const signed: PresignedRequest = await deps.objects.presignPart(stagingKey(record.dataset_id, record.upload_id), record.store_upload_id, p.part_number, {
        expiresIn: UPLOAD_URL_TTL_S,
        contentLength: size,
        ...(p.sha256 ? { sha256: p.sha256 } : { crc32: p.crc32 }),
      });
      return { part_number: p.part_number, size, url: signed.url, method: 'PUT', headers: signed.headers, expires_at: signed.expiresAt.toISOString() };
    }),
  );
}

/** A file's upload in parts ended: its content stored now, or found stored already. */
export interface CompletedUpload {
  path: string;
  size: number;
  sha256: string;
  status: 'stored' | 'present';
}

/**
 * Assembles the parts and stores the file at its content key once its SHA-256 over the whole assembled file
 * is `sha256` (and the one named at the start, if any). On a mismatch nothing is stored, the upload is
 * dropped, and the refusal names the path and both hashes.
 */
export async function completeUpload(deps: UploadDeps, record: UploadRecord, sha256: string): Promise<CompletedUpload> {
  if (record.sha256 !== null && record.sha256 !== sha256) {
    throw new NdsError('content_mismatch', { message: `${record.path}: the upload was started for SHA-256 ${record.sha256}, and is being completed as ${sha256}; nothing was stored.` });
  }
  const staging = stagingKey(record.dataset_id, record.upload_id);
  const target = contentKey(record.dataset_id, sha256);
  const done = async (status: 'stored' | 'present') => {
    // Counted as content first: a failure between the two leaves the upload's files, and a retry moves again.
    await moveStorage(deps, record.dataset_id, uploadGrantKey(record.upload_id), contentGrantKey(sha256), record.size);
    await deps.objects.deletePrefix(uploadPrefix(record.dataset_id, record.upload_id));
    return { path: record.path, size: record.size, sha256, status };
  };
  // Another complete of the same upload (a retry racing the first) may have stored the file meanwhile.
  const storedMeanwhile = async () => {
    const existing = await deps.objects.head(target);
    return existing !== undefined && existing.size === record.size;
  };
  if (await storedMeanwhile()) {
    await deps.objects.abortMultipart(staging, record.store_upload_id).catch(() => undefined);
    return done('present');
  }
  try {
    // The store lists the parts itself and refuses missing ones (`MultipartPartMissingError`, the upload left
    // open); its upload gone while the record is still here (`MultipartUploadGoneError`) means another request
    // is completing it, or has just failed to: both answered below.
    await deps.objects.completeMultipart(staging, record.store_upload_id, record.part_count, { key: target, size: record.size, sha256 });
  } catch (err) {
    if (err instanceof ContentMismatchError) {
      await deps.objects.deletePrefix(uploadPrefix(record.dataset_id, record.upload_id)).catch(() => undefined);
      await releaseStorage(deps, record.dataset_id, uploadGrantKey(record.upload_id)).catch(() => undefined);
      const actual = err.actual.sha256 ?? `(${err.actual.size} bytes, not ${record.size})`;
      throw new NdsError('content_mismatch', { message: `${record.path}: the assembled file's SHA-256 is ${actual}, not ${sha256}; nothing was stored.`, details: [`expected ${sha256}`, `actual ${actual}`], cause: err });
    }
    // A complete of the same upload racing this one (a retry) took the parts from under it: when it has stored
    // the file, this one answers as a retry would; while it is still at it, the caller is told to ask again.
    if (await storedMeanwhile()) return done('present');
    if (err instanceof NdsError) throw err;
    if (err instanceof MultipartPartMissingError) {
      const { missing } = err;
      throw new NdsError('upload_incomplete', {
        message: `${record.path}: ${missing.length} of ${record.part_count} parts are not stored yet (first: ${missing[0]}).`,
        details: [`missing parts: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', ...' : ''}`],
        cause: err,
      });
    }
    if (err instanceof MultipartUploadGoneError) {
      throw new NdsError('conflict', { message: `${record.path}: another request is completing this upload; ask again in a moment to learn its result.`, cause: err });
    }
    throw err;
  }
  return done('stored');
}

/**
 * Completions started in this process, by dataset, upload and SHA-256. A completion outlives the request that
 * started it (assembling and hashing 6 GiB takes minutes on a slow store, longer than a proxy or an HTTP client
 * waits for an answer), and the client asking again joins it and learns its result. An end that ends the upload
 * (stored, or refused for its content) is kept a while, for the client that asks again once the record is
 * gone; any other (parts missing, a store failing) is told to one request only, so that the next one tries anew.
 */
interface Completion {
  record: Promise<UploadRecord>;
  result: Promise<CompletedUpload>;
  /** Set when the result is known: `kept` for every asker, `once` for the next one. */
  ended?: 'kept' | 'once';
}
const completions = new Map<string, Completion>();
const ENDED_KEPT_MS = 15 * 60_000;
const ONCE_KEPT_MS = 60_000;

export type CompletionAnswer = CompletedUpload | { status: 'completing'; path: string; size: number; sha256: string };

/**
 * Completes upload `uploadId` of `datasetId` (see `completeUpload`), or joins the completion of it running or
 * ended here; answers `completing` when it has not ended within `waitMs`, and then it runs on: asking again
 * with the same SHA-256 waits for the same completion. `datasetId` must be one the caller may write.
 */
export async function completeUploadWithin(deps: UploadDeps, datasetId: string, uploadId: string, sha256: string, waitMs: number): Promise<CompletionAnswer> {
  const key = `${datasetId}/${uploadId}/${sha256}`;
  let completion = completions.get(key);
  if (!completion) {
    // Set before anything is awaited: requests racing this one join it instead of starting their own.
    const record = findUpload(deps, datasetId, uploadId);
    const started: Completion = { record, result: record.then((found) => completeUpload(deps, found, sha256)) };
    const end = (how: 'kept' | 'once') => {
      started.ended = how;
      setTimeout(() => completions.get(key) === started && completions.delete(key), how === 'kept' ? ENDED_KEPT_MS : ONCE_KEPT_MS).unref();
    };
    started.result.then(
      () => end('kept'),
      (err: unknown) => end(err instanceof NdsError && err.code === 'content_mismatch' ? 'kept' : 'once'),
    );
    completions.set(key, started);
    completion = started;
  }
  let timer: NodeJS.Timeout | undefined;
  let told = true;
  try {
    const { path, size } = await completion.record;
    // An ended completion wins the race (it comes first); with no wait, one not ended answers `completing` at once.
    const waited = waitMs > 0 ? new Promise<'waited'>((resolve) => (timer = setTimeout(resolve, waitMs, 'waited'))) : Promise.resolve('waited' as const);
    const done = await Promise.race([completion.result, waited]);
    if (done !== 'waited') return done;
    told = false;
    return { status: 'completing', path, size, sha256 };
  } finally {
    clearTimeout(timer);
    // A result told (or thrown) here that is to be told once is not told again.
    if (told && completion.ended === 'once' && completions.get(key) === completion) completions.delete(key);
  }
}

export async function abortUpload(deps: UploadDeps, record: UploadRecord): Promise<void> {
  await deps.objects.abortMultipart(stagingKey(record.dataset_id, record.upload_id), record.store_upload_id);
  await deps.objects.deletePrefix(uploadPrefix(record.dataset_id, record.upload_id));
  await releaseStorage(deps, record.dataset_id, uploadGrantKey(record.upload_id));
}

/** The unfinished uploads of a dataset that `userId` started, oldest first. */
export async function listUploads(deps: UploadDeps, datasetId: string, userId: number): Promise<Array<UploadRecord & { expires_at: string }>> {
  const out: Array<UploadRecord & { expires_at: string }> = [];
  for await (const record of uploadRecords(deps, `uploads/${datasetId}/`)) {
    if (record.user_id === userId && Date.parse(expiresAt(deps.config, record)) > deps.clock.now().getTime()) out.push({ ...record, expires_at: expiresAt(deps.config, record) });
  }
  return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
}

async function* uploadRecords(deps: UploadDeps, prefix: string): AsyncIterable<UploadRecord> {
  const keys: string[] = [];
  for await (const info of deps.objects.list(prefix)) if (info.key.endsWith('/upload.json')) keys.push(info.key);
  for (const key of keys) {
    const raw = await deps.objects.readAll(key);
    if (!raw) continue;
    try {
      yield JSON.parse(raw.toString('utf8')) as UploadRecord;
    } catch {
      // a record cut short by a crash: its upload is swept by age below
    }
  }
}

/**
 * Aborts every unfinished upload of a dataset, parts and all (its deletion: the parts live outside `<id>/`, and
 * the room they held goes with the dataset's row). Returns how many.
 */
export async function abortDatasetUploads(deps: UploadDeps, datasetId: string): Promise<number> {
  let aborted = 0;
  for await (const record of uploadRecords(deps, `uploads/${datasetId}/`)) {
    await abortUpload(deps, record);
    aborted++;
  }
  // Whatever no record names any more (a record cut short by a crash).
  await deps.objects.deletePrefix(`uploads/${datasetId}/`);
  return aborted;
}

/** Aborts every upload started more than UPLOAD_STALE_AFTER_S ago, parts and all; returns how many. */
export async function sweepStaleUploads(deps: UploadDeps): Promise<number> {
  let swept = 0;
  for await (const record of uploadRecords(deps, 'uploads/')) {
    if (Date.parse(expiresAt(deps.config, record)) > deps.clock.now().getTime()) continue;
    await abortUpload(deps, record);
    swept++;
  }
  return swept;
}

/**
 * Runs `sweepStaleUploads`, then `sweepStorageGrants` (the room of uploads that ended without a word, and of
 * URLs that expired unused, `storage-quota.ts`), every `intervalMs` (and once at once) until stopped.
 */
export function startUploadSweeper(deps: UploadDeps & Pick<Deps, 'log'>, intervalMs: number): Periodic {
  return runPeriodically(
    () =>
      sweepStaleUploads(deps)
        .then(
          (n) => n > 0 && deps.log.info({ swept: n }, 'aborted stale multipart uploads'),
          (err: unknown) => deps.log.warn({ err }, 'the sweep of stale multipart uploads failed'),
        )
        .then(() => sweepStorageGrants(deps))
        .then(
          (n) => n > 0 && deps.log.info({ dropped: n }, 'dropped storage grants of uploads that never came'),
          (err: unknown) => deps.log.warn({ err }, 'the sweep of storage grants failed'),
        ),
    intervalMs,
  );
}
