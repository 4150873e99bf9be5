/**
 * The folder a conversion reads its recordings from, taken as hostile input: a file is opened only when
 * it is a regular file whose real path lies inside the folder. A link that leads out of it (to a secret of
 * the server), a FIFO or device, a name that climbs out (`DataFile=../../x`) are refused with a reason the
 * dataset's owner can act on, never read. The server's checkout also names the entries it refused outright
 * (every link but git-annex's, files too large in git; `conversion/commit-tree.ts`), each with its sentence.
 * A checkout that writes large files without their content gives them their content as they are opened (`fill`),
 * and names the SHA-256 of content it took from a content-addressed store (`digest`), so nobody hashes it again.
 */
import { constants } from 'node:fs';
import { lstat, open, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { FileReadError } from './conversion-errors.js';

const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export class SourceTree {
  /** The folder, as an absolute path (as given, links in it unresolved). */
  readonly root: string;
  readonly #realRoot: string;
  readonly #refused: ReadonlyMap<string, string>;
  readonly #fill: ((relative: string) => Promise<void>) | undefined;
  readonly #digest: ((relative: string) => string | undefined) | undefined;

  private constructor(
    root: string,
    realRoot: string,
    refused: ReadonlyMap<string, string>,
    fill: ((relative: string) => Promise<void>) | undefined,
    digest: ((relative: string) => string | undefined) | undefined,
  ) {
    this.root = root;
    this.#realRoot = realRoot.endsWith(path.sep) ? realRoot : `${realRoot}${path.sep}`;
    this.#refused = refused;
    this.#fill = fill;
    this.#digest = digest;
  }

  /**
   * The tree under `root`. `refused` maps paths (relative, with `/`) to why they are not read (a symbolic link
   * of the repository, a file too large in git): opening one fails with that sentence. `fill`, when given, is
   * called with a file's relative path before it is opened (and before it is checked): it gives the file its
   * content if it has none yet.
   * `digest`, when given, answers a file's SHA-256 (hex) when its content is known to have one without reading
   * it (content taken from a content-addressed store), undefined otherwise.
   */
  static async at(
    root: string,
    refused: ReadonlyMap<string, string> = new Map(),
    fill?: (relative: string) => Promise<void>,
    digest?: (relative: string) => string | undefined,
  ): Promise<SourceTree> {
    const absolute = path.resolve(root);
    return new SourceTree(absolute, await realpath(absolute), refused, fill, digest);
  }

  /** The tree of a lone data file: its folder (companion files are looked for beside it). */
  static around(file: string): Promise<SourceTree> {
    return SourceTree.at(path.dirname(path.resolve(file)));
  }

  /** `file` relative to the root, with `/`; undefined when the name itself lies outside. */
  relative(file: string): string | undefined {
    const rel = path.relative(this.root, path.resolve(this.root, file));
    if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
    return rel.split(path.sep).join('/');
  }

  /** The SHA-256 (hex) of `file`'s content when the tree knows it without reading the file (see `at`); undefined otherwise. */
  knownSha256(file: string): string | undefined {
    const rel = this.relative(file);
    return rel === undefined ? undefined : this.#digest?.(rel);
  }

  /**
   * True when there is an entry at `file` other than a folder (the caller then opens it, and learns there
   * why it may not be read); false when there is nothing there, or `file` names a place outside the tree.
   */
  async exists(file: string): Promise<boolean> {
    if (this.relative(file) === undefined) return false;
    const s = await lstat(path.resolve(this.root, file)).catch(() => undefined);
    return s !== undefined && !s.isDirectory();
  }

  /** Opens a regular file of the tree for reading; throws `FileReadError` saying why not, naming it relative to the root. */
  async open(file: string): Promise<FileHandle> {
    const absolute = path.resolve(this.root, file);
    const rel = this.relative(absolute);
    if (rel === undefined) throw new FileReadError(`${path.basename(absolute)} lies outside the dataset's folder: only files inside it are read.`);
    const why = this.#refused.get(rel);
    if (why !== undefined) throw new FileReadError(why);
    await this.#fill?.(rel);
    let real: string;
    try {
      real = await realpath(absolute);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? 'error';
      // The entry is there but leads nowhere: a dangling link is refused like one that leads out.
      if (code === 'ENOENT' && (await lstat(absolute).catch(() => undefined))) throw outside(rel, cause);
      throw new FileReadError(code === 'ENOENT' ? `${rel} does not exist.` : `${rel} could not be opened (${code}).`, { cause });
    }
    if (!real.startsWith(this.#realRoot)) throw outside(rel);
    const before = await lstat(real);
    if (!before.isFile()) throw new FileReadError(`${rel} is not a regular file: nds reads only regular files of a dataset.`);
    let handle: FileHandle;
    try {
      handle = await open(real, READ_NO_FOLLOW);
    } catch (cause) {
      throw new FileReadError(`${rel} could not be opened (${(cause as NodeJS.ErrnoException).code ?? 'error'}).`, { cause });
    }
    const after = await handle.stat();
    // Swapped between the check and the open: read nothing.
    if (!after.isFile() || after.ino !== before.ino || after.dev !== before.dev) {
      await handle.close();
      throw new FileReadError(`${rel} changed while it was being opened.`);
    }
    return handle;
  }

  /** The whole of a (small) text file of the tree, as UTF-8. */
  async readText(file: string): Promise<string> {
    const handle = await this.open(file);
    try {
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  }
}

function outside(rel: string, cause?: unknown): FileReadError {
  return new FileReadError(`${rel} is a link that leads outside the dataset's folder (or nowhere): only files inside it are read.`, { cause });
}
