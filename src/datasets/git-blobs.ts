/**
 * Reading a commit's tree out of a bare repository without checking it out: the file list from
 * `git ls-tree`, the blobs streamed one after another through a single `git cat-file --batch`, so neither
 * the repository nor a large blob is ever held in memory.
 */
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { NdsError } from '../core/errors.js';
import { eachGitRecord, GitError, GitOutputTooLargeError } from '../git/run-git.js';
import { spawnGit } from '../git/spawn-git.js';

export interface TreeFile {
  path: string;
  /** Git file mode: `100644`, `100755` or `120000` (a symlink, whose blob is the link target). */
  mode: string;
  oid: string;
  size: number;
}

/**
 * Every file of a commit's tree (submodule entries are not files and are left out), read entry by entry; a
 * tree of more than `maxFiles` entries (MAX_TREE_FILES) is refused (`validation_failed`).
 */
export async function listTree(gitDir: string, commit: string, maxFiles: number): Promise<TreeFile[]> {
  const files: TreeFile[] = [];
  try {
    await eachGitRecord(['--git-dir', gitDir, 'ls-tree', '-r', '-z', '-l', '--full-tree', commit], { separator: '\0', limit: maxFiles }, (record) => {
      const m = /^(\d{6}) (\w+) ([0-9a-f]+) +(\S+)\t([\s\S]+)$/.exec(record);
      if (m && m[2] === 'blob') files.push({ mode: m[1], oid: m[3], size: Number(m[4]), path: m[5] });
    });
  } catch (err) {
    if (!(err instanceof GitOutputTooLargeError)) throw err;
    throw new NdsError('validation_failed', { details: [`commit ${commit}: its tree lists more than ${maxFiles.toLocaleString('en')} files, the most a version may hold here`], cause: err });
  }
  return files;
}

/** Buffered reading of a child's stdout by lines and by exact byte counts. */
class ChunkReader {
  #buffered: Buffer = Buffer.alloc(0);
  readonly #chunks: AsyncIterator<Buffer>;
  readonly #ended: () => Error;

  constructor(stream: Readable, ended: () => Error) {
    this.#chunks = stream[Symbol.asyncIterator]();
    this.#ended = ended;
  }

  async #fill(): Promise<void> {
    const next = await this.#chunks.next();
    if (next.done) throw this.#ended();
    this.#buffered = this.#buffered.length ? Buffer.concat([this.#buffered, next.value]) : next.value;
  }

  async line(): Promise<string> {
    let end: number;
    while ((end = this.#buffered.indexOf(10)) < 0) await this.#fill();
    const text = this.#buffered.subarray(0, end).toString('utf8');
    this.#buffered = this.#buffered.subarray(end + 1);
    return text;
  }

  /** Writes the next `n` bytes into `body`, waiting for it to drain; stops early if `consumer` fails. */
  async pipe(n: number, body: PassThrough, consumer: Promise<void>): Promise<void> {
    while (n > 0) {
      if (this.#buffered.length === 0) await this.#fill();
      const take = Math.min(n, this.#buffered.length);
      const chunk = this.#buffered.subarray(0, take);
      this.#buffered = this.#buffered.subarray(take);
      n -= take;
      if (!body.write(chunk)) await Promise.race([once(body, 'drain'), consumer]);
    }
  }

  async skip(n: number): Promise<void> {
    while (this.#buffered.length < n) await this.#fill();
    this.#buffered = this.#buffered.subarray(n);
  }
}

/**
 * Streams the blobs `oids` (in that order) through one `git cat-file --batch`; `each` receives each blob's
 * bytes as a stream and must read it to the end before the next blob is read.
 */
export async function eachBlob(gitDir: string, oids: string[], each: (oid: string, size: number, body: Readable) => Promise<void>): Promise<void> {
  if (oids.length === 0) return;
  const args = ['--git-dir', gitDir, 'cat-file', '--batch'];
  const child = spawnGit(args);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  // Git's exit code reports a failure; a broken pipe on its stdin would only repeat it.
  child.stdin.on('error', () => {});
  child.stdin.end(`${oids.join('\n')}\n`);
  const reader = new ChunkReader(child.stdout, () => new GitError(args, null, `git cat-file ended early ${stderr}`));
  let body: PassThrough | undefined;
  try {
    for (const oid of oids) {
      const header = await reader.line();
      const m = /^([0-9a-f]+) (\w+) (\d+)$/.exec(header);
      if (!m || m[2] !== 'blob') throw new GitError(args, null, `${oid}: ${header}`);
      const size = Number(m[3]);
      body = new PassThrough();
      const consumer = each(oid, size, body);
      // Awaited below; the handler only keeps a failure while the bytes are still being fed from counting as unhandled.
      consumer.catch(() => {});
      await reader.pipe(size, body, consumer);
      body.end();
      await consumer;
      await reader.skip(1);
    }
  } catch (err) {
    body?.destroy();
    child.kill();
    await exited.catch(() => undefined);
    throw err;
  }
  const code = await exited;
  if (code !== 0) throw new GitError(args, code, stderr);
}
