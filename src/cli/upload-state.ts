/**
 * What `nds datasets upload` remembers of its unfinished uploads in parts, beside its hash cache
 * (`upload-parts.json`): for each file (dataset and absolute path) the upload id, the part size, and the parts
 * sent. An entry holds only while the file's size, modification time and inode are what they were; a file
 * changed since starts a new upload. The server's list of stored parts is the truth on resume: this file only
 * tells which upload to ask about, so a lost or stale state costs a re-sent file, never wrong content.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface UploadStateEntry {
  upload_id: string;
  size: number;
  mtimeMs: number;
  ino: number;
  part_size: number;
  /** Part numbers this client saw stored. */
  parts_done: number[];
}

export class UploadState {
  readonly #file: string | undefined;
  #entries = new Map<string, UploadStateEntry>();
  #dirty = false;

  private constructor(file: string | undefined) {
    this.#file = file;
  }

  /** The state file beside a hash cache file (`undefined`: kept in memory only). */
  static besideHashCache(hashCacheFile: string | undefined): string | undefined {
    return hashCacheFile ? path.join(path.dirname(hashCacheFile), 'upload-parts.json') : undefined;
  }

  static async open(file: string | undefined): Promise<UploadState> {
    const state = new UploadState(file);
    if (!file) return state;
    try {
      const parsed = JSON.parse(await readFile(file, 'utf8')) as { version?: number; entries?: Array<[string, UploadStateEntry]> };
      if (parsed.version === 1 && Array.isArray(parsed.entries)) state.#entries = new Map(parsed.entries);
    } catch {
      // first run, or a damaged file: uploads start anew, which is always safe
    }
    return state;
  }

  get(datasetId: string, abs: string, stat: { size: number; mtimeMs: number; ino: number }): UploadStateEntry | undefined {
    const e = this.#entries.get(`${datasetId}\n${abs}`);
    if (!e || e.size !== stat.size || e.mtimeMs !== stat.mtimeMs || e.ino !== stat.ino) return undefined;
    return e;
  }

  set(datasetId: string, abs: string, entry: UploadStateEntry): void {
    this.#entries.set(`${datasetId}\n${abs}`, entry);
    this.#dirty = true;
  }

  partDone(datasetId: string, abs: string, part: number): void {
    const e = this.#entries.get(`${datasetId}\n${abs}`);
    if (!e) return;
    e.parts_done.push(part);
    this.#dirty = true;
  }

  forget(datasetId: string, abs: string): void {
    this.#dirty = this.#entries.delete(`${datasetId}\n${abs}`) || this.#dirty;
  }

  /** Writes the state atomically (temporary file and rename). */
  async save(): Promise<void> {
    if (!this.#file || !this.#dirty) return;
    await mkdir(path.dirname(this.#file), { recursive: true });
    const tmp = `${this.#file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ version: 1, entries: [...this.#entries] }), { mode: 0o600 });
    await rename(tmp, this.#file);
    this.#dirty = false;
  }
}
