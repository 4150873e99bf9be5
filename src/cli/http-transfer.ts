/**
 * Streaming transfers of whole files over HTTP(S) for `nds datasets upload|download`: a file goes up or down
 * in chunks, so memory stays bounded whatever its size. Failures that a retry may cure are `TransferError`s
 * with `retryable: true`.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { ERROR_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { BufferPool } from '../core/buffer-pool.js';
import { pipeline } from 'node:stream/promises';

export class TransferError extends Error {
  readonly retryable: boolean;
  readonly status: number | undefined;
  constructor(message: string, retryable: boolean, status?: number, cause?: unknown) {
    super(message, { cause });
    this.name = 'TransferError';
    this.retryable = retryable;
    this.status = status;
  }
}

const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 32 }), https: new https.Agent({ keepAlive: true, maxSockets: 32 }) };

function requestFor(url: URL, method: string, headers: Record<string, string>): http.ClientRequest {
  const lib = url.protocol === 'https:' ? https : http;
  return lib.request(url, { method, headers, agent: url.protocol === 'https:' ? agents.https : agents.http });
}

/**
 * The start of an answer's body, for a message: an object store's answer to a PUT, or its refusal. Past
 * `ERROR_ANSWER_MAX_BYTES` reading stops and the connection closes, so an endpoint answering without end
 * costs neither memory nor time.
 */
async function readText(res: http.IncomingMessage): Promise<string> {
  let text = '';
  let bytes = 0;
  for await (const c of res as AsyncIterable<Buffer>) {
    if (text.length < 2000) text += c;
    bytes += c.length;
    if (bytes > ERROR_ANSWER_MAX_BYTES) break;
  }
  return text;
}

function statusError(status: number, body: string, what: string): TransferError {
  let reason = body.slice(0, 300);
  try {
    const parsed = JSON.parse(body) as { error?: string; message?: string };
    if (parsed.error) reason = `${parsed.message ?? ''} (${parsed.error})`.trim();
  } catch {
    // an S3 server answers XML
  }
  // 403 is retryable: an expired presigned URL is cured by asking for a new one.
  const retryable = status >= 500 || status === 429 || status === 408 || status === 403;
  return new TransferError(`${what}: HTTP ${status} ${reason}`, retryable, status);
}

const CHUNK = 1 << 20;
/** 1 MiB buffers handed back by finished transfers: fresh ones cost page faults and garbage collection. */
const transferBuffers = new BufferPool(32);

/**
 * PUTs a file, or its `size` bytes from `start` (a part); `onBytes` sees progress. Bytes sent before a failure
 * are reported again on a retry. The file is read through two reused buffers, one filling while the other
 * drains into the socket.
 */
export async function putFile(target: { url: string; headers: Record<string, string> }, file: string, size: number, onBytes: (n: number) => void, start = 0): Promise<void> {
  const url = new URL(target.url);
  const req = requestFor(url, 'PUT', { 'content-length': String(size), 'content-type': 'application/octet-stream', ...target.headers });
  const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  // While the body is being sent, a failed connection ends the wait on any read or write.
  const broken = new Promise<never>((_, reject) => {
    req.once('error', reject);
    req.once('close', () => reject(new Error('the connection closed before the body was sent')));
  });
  answered.catch(() => undefined);
  broken.catch(() => undefined);
  const buffers = [transferBuffers.take(CHUNK), transferBuffers.take(CHUNK)];
  const sending: Array<Promise<void> | undefined> = [undefined, undefined];
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, 'r');
    let position = 0;
    for (let i = 0; position < size; i ^= 1) {
      if (sending[i]) await Promise.race([sending[i], broken]);
      const buffer = buffers[i];
      const { bytesRead } = await Promise.race([handle.read(buffer, 0, Math.min(CHUNK, size - position), start + position), broken]);
      if (bytesRead === 0) throw new TransferError(`${file} shrank while it was sent`, false);
      position += bytesRead;
      sending[i] = new Promise<void>((resolve, reject) => req.write(buffer.subarray(0, bytesRead), (err) => (err ? reject(err) : resolve())));
      sending[i]!.catch(() => undefined);
      onBytes(bytesRead);
    }
    await Promise.race([Promise.all(sending), broken]);
    await endPut(req, answered);
    // Only a transfer that ended cleanly returns its buffers: after a failure the socket may still hold them.
    for (const b of buffers) transferBuffers.give(b);
  } catch (err) {
    throw putFailure(req, err);
  } finally {
    await handle?.close();
  }
}

/** Ends a PUT's body and waits for its answer: a status outside 2xx is a refusal. */
async function endPut(req: http.ClientRequest, answered: Promise<http.IncomingMessage>): Promise<void> {
  req.end();
  const res = await answered;
  const body = await readText(res);
  if (res.statusCode! < 200 || res.statusCode! >= 300) throw statusError(res.statusCode!, body, 'upload refused');
}

/** A PUT that failed: its connection dropped, and the failure as a `TransferError` (retryable unless it is one). */
function putFailure(req: http.ClientRequest, err: unknown): TransferError {
  req.destroy();
  return err instanceof TransferError ? err : new TransferError(`upload failed: ${(err as Error).message}`, true, undefined, err);
}

/**
 * PUTs `bytes`, held in memory (a part read and hashed once, sent from the same buffer); `onBytes` sees each
 * megabyte once the socket took it. The caller keeps `bytes` unchanged until this settles.
 */
export async function putBytes(target: { url: string; headers: Record<string, string> }, bytes: Uint8Array, onBytes: (n: number) => void): Promise<void> {
  const req = requestFor(new URL(target.url), 'PUT', { 'content-length': String(bytes.length), 'content-type': 'application/octet-stream', ...target.headers });
  let settled = false;
  try {
    const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
      req.once('close', () => reject(new Error('the connection closed before an answer came')));
    });
    // All of it queued at once: the socket writes from `bytes` itself, no copy.
    for (let at = 0; at < bytes.length; at += CHUNK) {
      const piece = bytes.subarray(at, Math.min(bytes.length, at + CHUNK));
      req.write(piece, (err) => {
        if (!err && !settled) onBytes(piece.length);
      });
    }
    await endPut(req, answered);
  } catch (err) {
    throw putFailure(req, err);
  } finally {
    settled = true;
  }
}

/**
 * GETs `url` into `dest`, hashing on the way; returns the size and hex SHA-256 of what arrived.
 * On failure `dest` is removed.
 */
/**
 * Writes the object at `url` to `dest`, refusing to take in more than `expectedSize` bytes (the manifest's
 * size): an endpoint that sends more, or announces more, would otherwise fill the disk with one small file.
 */
export async function getToFile(url: string, headers: Record<string, string>, dest: string, expectedSize: number, onBytes: (n: number) => void): Promise<{ size: number; sha256: string }> {
  const req = requestFor(new URL(url), 'GET', headers);
  const hash = createHash('sha256');
  let size = 0;
  try {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      req.once('response', resolve);
      req.once('error', reject);
      req.end();
    });
    if (res.statusCode !== 200) throw statusError(res.statusCode!, await readText(res), 'download refused');
    const tooLarge = (bytes: number) => new TransferError(`download refused: the object has ${bytes} or more bytes, the manifest says ${expectedSize}`, false);
    const announced = Number(res.headers['content-length']);
    if (Number.isFinite(announced) && announced > expectedSize) throw tooLarge(announced);
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        if (size + chunk.length > expectedSize) return done(tooLarge(size + chunk.length));
        size += chunk.length;
        hash.update(chunk);
        onBytes(chunk.length);
        done(null, chunk);
      },
    });
    await pipeline(res, meter, createWriteStream(dest));
    return { size, sha256: hash.digest('hex') };
  } catch (err) {
    req.destroy();
    await rm(dest, { force: true });
    if (err instanceof TransferError) throw err;
    throw new TransferError(`download failed: ${(err as Error).message}`, true, undefined, err);
  }
}

/**
 * Size and hex SHA-256 of a file, read through one reused 1 MiB buffer: a read stream would allocate a
 * fresh buffer per chunk, and collecting those cost the upload more than the hashing.
 */
export async function hashFile(file: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  const buffer = transferBuffers.take(CHUNK);
  let size = 0;
  const handle = await open(file, 'r');
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      size += bytesRead;
    }
  } finally {
    await handle.close();
    transferBuffers.give(buffer);
  }
  return { size, sha256: hash.digest('hex') };
}

/** Runs `fn` until it succeeds, retrying retryable `TransferError`s with exponential backoff and jitter. */
export async function withRetries<T>(attempts: number, fn: (attempt: number) => Promise<T>, onRetry?: (err: TransferError, attempt: number) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!(err instanceof TransferError) || !err.retryable || attempt >= attempts) throw err;
      onRetry?.(err, attempt);
      await new Promise((r) => setTimeout(r, Math.min(8000, 250 * 2 ** (attempt - 1)) * (0.5 + Math.random())));
    }
  }
}

export function closeAgents(): void {
  agents.http.destroy();
  agents.https.destroy();
}
