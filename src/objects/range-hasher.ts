/**
 * SHA-256 of files fed range by range on a worker thread, which reads the ranges itself (with `O_DIRECT` where
 * the filesystem takes it: past the page cache, which the parts were written around too): the folder store's
 * uploads in parts (decision 0031) hash each stored part into the whole file's hash in order while the upload
 * goes on, off the event loop that receives the parts, so completion has little or nothing left to read.
 * One hash state a name; the worker reads and hashes one range at a time. A failed worker fails the calls
 * waiting on it, and the next call starts another: a caller that cannot trust the state hashes anew.
 */
import { ThreadRequests, type ThreadAnswer } from './thread-requests.js';

/** The worker, as CommonJS source evaluated in its thread (no file to resolve, under tsx or a bundle alike). */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { constants, openSync, readSync, closeSync } = require('node:fs');
const ALIGN = 4096;
const SIZE = 4 << 20;
// Page-aligned (a WebAssembly memory starts on a page), as reads with O_DIRECT want.
const buffer = Buffer.from(new WebAssembly.Memory({ initial: SIZE / 65536, maximum: SIZE / 65536 }).buffer);
const hashes = new Map();
let directRefused = constants.O_DIRECT === undefined;
function openForReading(file) {
  if (!directRefused) {
    try {
      return { fd: openSync(file, constants.O_RDONLY | constants.O_DIRECT), direct: true };
    } catch (err) {
      if (err.code !== 'EINVAL') throw err;
      directRefused = true;
    }
  }
  return { fd: openSync(file, 'r'), direct: false };
}
function feed(hash, file, offset, length) {
  const { fd, direct } = openForReading(file);
  try {
    const end = offset + length;
    for (let position = direct ? offset - (offset % ALIGN) : offset; position < end; ) {
      const want = direct ? Math.min(SIZE, Math.ceil((end - position) / ALIGN) * ALIGN) : Math.min(SIZE, end - position);
      const n = readSync(fd, buffer, 0, want, position);
      const from = Math.max(0, offset - position);
      const to = Math.min(n, end - position);
      if (to <= from) throw Object.assign(new Error(file + ' ended at ' + (position + n)), { code: 'ESHORT' });
      hash.update(buffer.subarray(from, to));
      position += n;
    }
  } finally {
    closeSync(fd);
  }
}
parentPort.on('message', (m) => {
  try {
    if (m.op === 'update') {
      let hash = hashes.get(m.name);
      if (!hash) hashes.set(m.name, (hash = createHash('sha256')));
      feed(hash, m.file, m.offset, m.length);
      parentPort.postMessage({ seq: m.seq });
    } else if (m.op === 'digest') {
      const hash = hashes.get(m.name) ?? createHash('sha256');
      hashes.delete(m.name);
      parentPort.postMessage({ seq: m.seq, sha256: hash.digest('hex') });
    } else {
      hashes.delete(m.name);
      parentPort.postMessage({ seq: m.seq });
    }
  } catch (err) {
    hashes.delete(m.name);
    parentPort.postMessage({ seq: m.seq, error: String((err && err.message) || err), code: err && err.code });
  }
});
`;

export class RangeHasher {
  readonly #thread = new ThreadRequests<ThreadAnswer & { sha256?: string }>(WORKER_SOURCE, 'hashing');

  /** Feeds `length` bytes of `file` from `offset` into the hash named `name` (a new one when unknown). */
  async update(name: string, file: string, offset: number, length: number): Promise<void> {
    await this.#thread.ask({ op: 'update', name, file, offset, length });
  }

  /** The hex SHA-256 of everything fed to `name`, which is then forgotten. */
  async digest(name: string): Promise<string> {
    return (await this.#thread.ask({ op: 'digest', name })).sha256!;
  }

  /** Forgets the hash named `name`. */
  async drop(name: string): Promise<void> {
    if (this.#thread.running) await this.#thread.ask({ op: 'drop', name });
  }

  async close(): Promise<void> {
    await this.#thread.close();
  }
}
