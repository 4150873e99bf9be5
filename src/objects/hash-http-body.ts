/**
 * The SHA-256 of an object read over one plain HTTP/1.1 GET (a presigned URL), its bytes landing in one
 * reused 1 MiB buffer (the socket's `onread`) and hashed there (and handed on, to be written to a file): the S3
 * store's check of an assembled upload and its copies of objects to files (decision 0050). Through the SDK's
 * stream the same read takes a new 64 KiB buffer and a stream event per socket read, and cost here more CPU than
 * the hash itself; this way the read costs next to nothing beside it.
 *
 * Only the plainest answer is read this way: status 200 with a Content-Length and no transfer or content
 * coding. Anything
 * else is a `PlainReadUnavailable`, and the caller reads the object through the SDK instead. A body that ends
 * short, a stalled socket or a head past its bound is an error: nothing here ever answers a hash of a part of
 * the object.
 */
import { createHash } from 'node:crypto';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';

const READ_BUFFER_BYTES = 1 << 20;
/** Response heads from S3 stores run to a few hundred bytes. */
const MAX_HEAD_BYTES = 64 * 1024;

/** The answer was not one this reader takes (another status, no length, a transfer coding): read it otherwise. */
export class PlainReadUnavailable extends Error {
  override readonly name = 'PlainReadUnavailable';
}

export interface HashedBody {
  size: number;
  sha256: string;
}

export interface HashHttpBodyOptions {
  /** How long any wait for the answer's next bytes may last. */
  idleMs: number;
  /** Certificate authorities trusted for an https URL instead of the system's (a store with its own CA). */
  ca?: string | Buffer;
  /**
   * Given each piece of the body in order, as it is hashed; the bytes are valid only during the call (the
   * buffer is read into again). A throw fails the read.
   */
  onBytes?: (bytes: Buffer) => void;
}

/** Reads the body of `GET url` and answers its size and hex SHA-256. */
export function hashHttpBody(url: string, options: HashHttpBodyOptions): Promise<HashedBody> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return Promise.reject(new PlainReadUnavailable(`no plain read over ${target.protocol}`));
  const secure = target.protocol === 'https:';
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(target.port || (secure ? 443 : 80));
  const request = `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n`;

  return new Promise<HashedBody>((resolve, reject) => {
    const hash = createHash('sha256');
    let head: Buffer | undefined = Buffer.alloc(0);
    let size = -1;
    let received = 0;
    let settled = false;
    const finish = (err: Error | undefined, value?: HashedBody) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const take = (bytes: Buffer) => {
      const wanted = Math.min(bytes.length, size - received);
      const piece = bytes.subarray(0, wanted);
      hash.update(piece);
      if (options.onBytes && wanted > 0) {
        try {
          options.onBytes(piece);
        } catch (err) {
          finish(err as Error);
          return;
        }
      }
      received += wanted;
      if (received === size) finish(undefined, { size, sha256: hash.digest('hex') });
    };
    const onread = {
      buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
      callback: (length: number, buffer: Uint8Array) => {
        if (settled) return false;
        const bytes = Buffer.from(buffer.buffer, buffer.byteOffset, length);
        if (head === undefined) {
          take(bytes);
          return true;
        }
        // The head is copied out of the shared buffer: the next read overwrites it.
        head = Buffer.concat([head, bytes]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          if (head.length > MAX_HEAD_BYTES) finish(new Error(`the answer's head passed ${MAX_HEAD_BYTES} bytes`));
          return true;
        }
        try {
          size = plainBodySize(head.subarray(0, end).toString('latin1'));
        } catch (err) {
          finish(err as Error);
          return false;
        }
        const rest = head.subarray(end + 4);
        head = undefined;
        if (size === 0) finish(undefined, { size, sha256: hash.digest('hex') });
        else take(rest);
        return true;
      },
    };
    const socket: Socket = secure
      ? connectTls({ host, port, servername: /^[\d.]+$|:/.test(host) ? undefined : host, ca: options.ca, onread } as ConnectionOptions)
      : connectTcp({ host, port, onread });
    socket.once(secure ? 'secureConnect' : 'connect', () => socket.write(request));
    socket.setTimeout(options.idleMs, () => finish(new Error(`no byte of ${target.host}'s answer for ${options.idleMs} ms`)));
    socket.once('error', (err) => finish(err));
    socket.once('close', () => finish(new Error(head === undefined ? `the body ended at ${received} of ${size} bytes` : 'the connection closed before the answer')));
  });
}

/** The body's length from a response head, or `PlainReadUnavailable` for any answer but a plain 200. */
function plainBodySize(head: string): number {
  const [statusLine, ...lines] = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  if (!status) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify((statusLine ?? '').slice(0, 80))}`);
  if (status[1] !== '200') throw new PlainReadUnavailable(`status ${status[1]}`);
  let length: number | undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'transfer-encoding' && value.toLowerCase() !== 'identity') throw new PlainReadUnavailable(`transfer-encoding ${value}`);
    if (name === 'content-encoding' && value.toLowerCase() !== 'identity' && value !== '') throw new PlainReadUnavailable(`content-encoding ${value}`);
    if (name === 'content-length') {
      if (!/^\d{1,16}$/.test(value) || (length !== undefined && Number(value) !== length)) throw new Error(`a content-length of ${JSON.stringify(value.slice(0, 40))}`);
      length = Number(value);
    }
  }
  if (length === undefined) throw new PlainReadUnavailable('no content-length');
  return length;
}
