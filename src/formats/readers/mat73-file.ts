/**
 * MAT v7.3 files (HDF5 behind a 512-byte user block) through h5wasm: MATLAB values as `MatValue`, except
 * large numeric datasets, which stay on disk and are read in slices. h5wasm is loaded on first use.
 */
import { CorruptOrTruncatedError } from '../conversion-errors.js';
import type { MatNumericArray, MatValue } from './mat-value.js';

type H5 = typeof import('h5wasm/node');
type H5File = InstanceType<H5['File']>;
type H5Dataset = InstanceType<H5['Dataset']>;
type H5Group = InstanceType<H5['Group']>;

let loading: Promise<H5> | undefined;

async function loadH5(): Promise<H5> {
  loading ??= import('h5wasm/node').then(async (module) => {
    await module.ready;
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

  private constructor(h5: H5, file: H5File, fileName: string) {
    this.#h5 = h5;
    this.#file = file;
    this.#fileName = fileName;
  }

  static async open(path: string, fileName: string): Promise<Mat73File> {
    const h5 = await loadH5();
    let file: H5File;
    try {
      file = new h5.File(path, 'r');
      file.keys();
    } catch (cause) {
      throw new CorruptOrTruncatedError(`${fileName} is a MAT v7.3 (HDF5) file that could not be opened: it is corrupt or truncated.`, { cause });
    }
    return new Mat73File(h5, file, fileName);
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
    try {
      return read();
    } catch (cause) {
      throw new CorruptOrTruncatedError(`${this.#fileName} is a MAT v7.3 file with unreadable content: it is corrupt or truncated.`, { cause });
    }
  }

  #corrupt(what: string): CorruptOrTruncatedError {
    return new CorruptOrTruncatedError(`${this.#fileName} is corrupt: ${what}.`);
  }
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
