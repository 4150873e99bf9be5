/**
 * The SHA-256 of local files remembered between runs of `nds datasets upload`, so a re-run after an
 * interruption (or of a folder that grew) reads only what changed. An entry holds only while the file's
 * size, modification time and inode are what they were; the server checks every upload's hash anyway, and a
 * refused upload forgets its entry, so a stale entry costs one failed PUT, never wrong content.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

interface Entry {
  size: number;
  mtimeMs: number;
  ino: number;
  sha256: string;
}

/** Beyond this many files, the least recently seen entries are dropped when the cache is saved. */
const MAX_ENTRIES = 200_000;

export class HashCache {
  readonly #file: string | undefined;
  #entries = new Map<string, Entry>();
  #dirty = false;

  private constructor(file: string | undefined) {
    this.#file = file;
  }

  /** Loads the cache at `file`; an unreadable or missing cache starts empty. `undefined` keeps it in memory. */
  static async open(file: string | undefined): Promise<HashCache> {
    const cache = new HashCache(file);
    if (!file) return cache;
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as { version?: number; entries?: Array<[string, Entry]> };
      if (parsed.version === 1 && Array.isArray(parsed.entries)) cache.#entries = new Map(parsed.entries);
    } catch {
      // first run, or a damaged cache: hashing again is always safe
    }
    return cache;
  }

  get(abs: string, stat: { size: number; mtimeMs: number; ino: number }): string | undefined {
    const e = this.#entries.get(abs);
    if (!e || e.size !== stat.size || e.mtimeMs !== stat.mtimeMs || e.ino !== stat.ino) return undefined;
    // Re-inserted so that saving keeps the recently used entries.
    this.#entries.delete(abs);
    this.#entries.set(abs, e);
    return e.sha256;
  }

  set(abs: string, entry: Entry): void {
    this.#entries.delete(abs);
    this.#entries.set(abs, entry);
    this.#dirty = true;
  }

  forget(abs: string): void {
    this.#dirty = this.#entries.delete(abs) || this.#dirty;
  }

  /** Writes the cache atomically (temporary file and rename), keeping the newest MAX_ENTRIES entries. */
  async save(): Promise<void> {
    if (!this.#file || !this.#dirty) return;
    const entries = [...this.#entries].slice(-MAX_ENTRIES);
    await mkdir(path.dirname(this.#file), { recursive: true });
    const tmp = `${this.#file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ version: 1, entries }), { mode: 0o600 });
    await rename(tmp, this.#file);
    this.#dirty = false;
  }
}
