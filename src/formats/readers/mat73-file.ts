/**
 * MAT v7.3 files (HDF5 behind a 512-byte user block) through h5wasm: MATLAB values as `MatValue`, except
 * large numeric datasets, which stay on disk and are read in slices. h5wasm is loaded on first use.
 *
 * HDF5 reads other files by name when a file asks it to: a dataset's external storage (its bytes in a file
 * named by any path), virtual datasets and external links. h5wasm's Node build reaches the real file system,
 * so an uploaded file could name `/proc/self/environ` or the server's configuration and have its bytes
 * converted into a recording the uploader downloads. So HDF5 may open only the files this module opened
 * itself (`openable`); any other open fails, and the read that asked for it is refused as a file that refers
 * to other files.
 *
 * h5wasm also drops the status of its reads: a read that HDF5 failed (that refused open, a corrupt chunk)
 * returned the buffer it had allocated for the values, uninitialized, holding whatever the module's heap held
 * before (another file's samples, read for another user). Its read functions are wrapped to throw instead.
 */
import { resolve } from 'node:path';
import { CorruptOrTruncatedError, UnsupportedFormatError } from '../conversion-errors.js';
import type { MatNumericArray, MatValue } from './mat-value.js';

type H5 = typeof import('h5wasm/node');
type H5File = InstanceType<H5['File']>;
type H5Dataset = InstanceType<H5['Dataset']>;
type H5Group = InstanceType<H5['Group']>;

let loading: Promise<H5> | undefined;

/** The files HDF5 may open (absolute paths), each with the number of `Mat73File`s open on it. */
const openable = new Map<string, number>();
/** Opens refused since the module was loaded: a read during which this moved asked for another file. */
let refusedOpens = 0;

/** emscripten's errno for "no such file" (WASI numbering). */
const ENOENT = 44;

interface EmscriptenFs {
  open(path: unknown, flags: unknown, mode?: unknown): unknown;
  ErrnoError: new (errno: number) => Error;
}

/** h5wasm's functions that read values into a buffer and answer HDF5's status (negative: failed). */
const READS = ['get_dataset_data', 'get_attribute_data', 'get_region_data'] as const;

async function loadH5(): Promise<H5> {
  loading ??= import('h5wasm/node').then(async (module) => {
    const library = (await module.ready) as unknown as Record<string, unknown>;
    for (const name of READS) {
      const read = library[name];
      if (typeof read !== 'function') throw new Error(`h5wasm has no ${name}: its reads cannot be checked`);
      library[name] = (...args: unknown[]) => {
        const status: unknown = read(...args);
        if (typeof status === 'number' && status < 0) throw new Error(`HDF5 could not read the values (${name})`);
        return status;
      };
    }
    const fs = library.FS as EmscriptenFs;
    // Every open of the library's C code goes through FS.open (the openat syscall looks it up at each call).
    const open = fs.open.bind(fs);
    fs.open = (path, flags, mode) => {
      // nds opens HDF5 files read-only, and HDF5 then opens the files they name read-only too: an open for
      // writing is a writer's own (the tests write MAT v7.3 files through the same module).
      const writing = typeof flags === 'number' && (flags & 3) !== 0;
      if (!writing && (typeof path !== 'string' || !openable.has(resolve(path)))) {
        refusedOpens++;
        throw new fs.ErrnoError(ENOENT);
      }
      return open(path, flags, mode);
    };
    return module;
  });
  return loading;
}

/** Datasets with more elements than this are not loaded as values (the data matrix is read in slices). */
const maxValueElements = 1 << 20;
const maxDepth = 16;

export class Mat73File {
  readonly #file: H5File;
  readonly #h5: H5;
  readonly #fileName: string;

  private constructor(h5: H5, file: H5File, fileName: string, path: string) {
    this.#h5 = h5;
    this.#file = file;
    this.#fileName = fileName;
    this.#path = path;
  }

  readonly #path: string;

  static async open(path: string, fileName: string): Promise<Mat73File> {
    const h5 = await loadH5();
    const absolute = resolve(path);
    openable.set(absolute, (openable.get(absolute) ?? 0) + 1);
    let file: H5File;
    try {
      file = new h5.File(absolute, 'r');
      file.keys();
    } catch (cause) {
      forget(absolute);
      throw new CorruptOrTruncatedError(`${fileName} is a MAT v7.3 (HDF5) file that could not be opened: it is corrupt or truncated.`, { cause });
    }
    return new Mat73File(h5, file, fileName, absolute);
  }

  /** The top-level struct `name` as a field map, or the file's top-level variables when there is no such struct. */
  fields(name: string, skip: ReadonlySet<string>): Map<string, MatValue | H5Dataset> {
    try {
      return this.#fields(name, skip);
    } catch (cause) {
      if (cause instanceof CorruptOrTruncatedError) throw cause;
      throw new CorruptOrTruncatedError(`${this.#fileName} is a MAT v7.3 file with unreadable content: it is corrupt or truncated.`, { cause });
    }
  }

  #fields(name: string, skip: ReadonlySet<string>): Map<string, MatValue | H5Dataset> {
    const root = this.#file.get(name);
    const group = root instanceof this.#h5.Group ? root : this.#file;
    const out = new Map<string, MatValue | H5Dataset>();
    for (const key of group.keys()) {
      if (key.startsWith('#')) continue;
      const entity = this.#guard(() => group.get(key));
      if (skip.has(key) && entity instanceof this.#h5.Dataset && matlabClass(entity) !== 'char') {
        out.set(key, entity);
        continue;
      }
      out.set(key, this.#value(entity, 0));
    }
    return out;
  }

  isDataset(value: unknown): value is H5Dataset {
    return value instanceof this.#h5.Dataset;
  }

  /** Rows [start, end) of a 2-D dataset, as a typed array (C order). */
  slice(dataset: H5Dataset, start: number, end: number): MatNumericArray {
    const value = this.#guard(() => dataset.slice([[start, end], []]));
    if (!ArrayBuffer.isView(value)) throw this.#corrupt('the data matrix is not numeric');
    return value as MatNumericArray;
  }

  close(): void {
    try {
      this.#file.close();
    } catch {
      // Closing a file that failed to open fully is best effort.
    } finally {
      forget(this.#path);
    }
  }

  #value(entity: unknown, depth: number): MatValue {
    if (depth > maxDepth) throw this.#corrupt('values are nested too deeply');
    if (entity instanceof this.#h5.Group) return this.#struct(entity, depth);
    if (!(entity instanceof this.#h5.Dataset)) return { kind: 'other', className: 'unknown' };
    const className = matlabClass(entity);
    const shape = entity.shape ?? [];
    const dims = [...shape].reverse();
    if (entity.attrs['MATLAB_empty']) return className === 'char' ? { kind: 'char', dims: [0, 0], text: '' } : { kind: 'numeric', className: 'double', dims: [0, 0], data: new Float64Array(0) };
    const count = shape.reduce((a, b) => a * b, 1);
    if (count > maxValueElements) return { kind: 'other', className };
    const value = this.#guard(() => entity.value);
    if (className === 'cell' && Array.isArray(value)) {
      return { kind: 'cell', dims, items: value.map((ref) => this.#value(this.#deref(ref), depth + 1)) };
    }
    if (!ArrayBuffer.isView(value)) return { kind: 'other', className };
    const data = value as unknown as MatNumericArray;
    if (className === 'char') return { kind: 'char', dims, text: charsToText(data) };
    return { kind: 'numeric', className, dims, data };
  }

  /** A struct group: fields are datasets (1x1 struct) or datasets of references (struct arrays). */
  #struct(group: H5Group, depth: number): MatValue {
    const fields = group.keys().filter((k) => !k.startsWith('#'));
    const columns = new Map<string, MatValue[]>();
    let count = 1;
    let isArray = false;
    for (const field of fields) {
      const entity = this.#guard(() => group.get(field));
      if (entity instanceof this.#h5.Dataset && entity.dtype === 'Reference' && matlabClass(entity) !== 'cell') {
        const refs = this.#guard(() => entity.value);
        const list = Array.isArray(refs) ? refs : [];
        if (list.length > maxValueElements) throw this.#corrupt('a struct array is too large');
        columns.set(field, list.map((ref) => this.#value(this.#deref(ref), depth + 1)));
        count = list.length;
        isArray = true;
      } else {
        columns.set(field, [this.#value(entity, depth + 1)]);
      }
    }
    const items: Map<string, MatValue>[] = [];
    for (let i = 0; i < (isArray ? count : 1); i++) {
      items.push(new Map(fields.map((f) => [f, columns.get(f)![i] ?? columns.get(f)![0]!])));
    }
    return { kind: 'struct', dims: [1, items.length], fields, items };
  }

  #deref(ref: unknown): unknown {
    return this.#guard(() => this.#file.dereference(ref as InstanceType<H5['Reference']>));
  }

  #guard<T>(read: () => T): T {
    const refused = refusedOpens;
    try {
      const value = read();
      if (refusedOpens !== refused) throw new Error('HDF5 asked to open another file');
      return value;
    } catch (cause) {
      if (refusedOpens !== refused) {
        throw new UnsupportedFormatError(`${this.#fileName} keeps data in other files (HDF5 external storage, a virtual dataset or an external link); nds reads only the data inside the file.`, { cause });
      }
      throw new CorruptOrTruncatedError(`${this.#fileName} is a MAT v7.3 file with unreadable content: it is corrupt or truncated.`, { cause });
    }
  }

  #corrupt(what: string): CorruptOrTruncatedError {
    return new CorruptOrTruncatedError(`${this.#fileName} is corrupt: ${what}.`);
  }
}

function forget(path: string): void {
  const count = (openable.get(path) ?? 1) - 1;
  if (count > 0) openable.set(path, count);
  else openable.delete(path);
}

function matlabClass(entity: { attrs: Record<string, { value: unknown }> }): string {
  const value = entity.attrs['MATLAB_class']?.value;
  return typeof value === 'string' ? value : 'double';
}

function charsToText(codes: MatNumericArray): string {
  let text = '';
  for (let i = 0; i < codes.length; i += 8192) text += String.fromCharCode(...Array.from(codes.subarray(i, i + 8192)));
  return text;
}
