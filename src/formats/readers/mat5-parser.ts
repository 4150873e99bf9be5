/**
 * A minimal MAT-file v5 parser (MATLAB "MAT-File Format", 2019, ch. 1): numeric, char, cell and struct
 * arrays, zlib-compressed elements, little-endian files. Every size is checked against the bytes that are
 * left, and decompression is capped for the whole file, so a damaged file fails with `corrupt_or_truncated`
 * instead of allocating without bound. Numeric arrays keep the type the file stores them in (MATLAB stores a
 * double array of small integers as bytes): widened, a few compressed kilobytes would become gigabytes.
 * Sparse, object and function-handle values come back as `{kind: 'other'}`.
 */
import { constants, inflateSync } from 'node:zlib';
import { CorruptOrTruncatedError, UnsupportedFormatError } from '../conversion-errors.js';
import type { MatNumericArray, MatValue } from './mat-value.js';

const mi = { INT8: 1, UINT8: 2, INT16: 3, UINT16: 4, INT32: 5, UINT32: 6, SINGLE: 7, DOUBLE: 9, INT64: 12, UINT64: 13, MATRIX: 14, COMPRESSED: 15, UTF8: 16, UTF16: 17, UTF32: 18 };
const miSize: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 9: 8, 12: 8, 13: 8, 16: 1, 17: 2, 18: 4 };
const mxClass: Record<number, string> = { 1: 'cell', 2: 'struct', 3: 'object', 4: 'char', 5: 'sparse', 6: 'double', 7: 'single', 8: 'int8', 9: 'uint8', 10: 'int16', 11: 'uint16', 12: 'int32', 13: 'uint32', 14: 'int64', 15: 'uint64' };
const maxDepth = 32;
/** The most top-level elements a file may hold: each compressed one costs an inflate, and a .set holds one or a few dozen. */
const maxElements = 10_000;
/** The compressed bytes inflated to learn a variable's name: enough for its tag, flags, dimensions and name. */
const peekBytes = 512;

export interface Mat5Options {
  /** Upper bound on the bytes the compressed variables read may inflate to, together (default 512 MiB). */
  maxInflatedBytes?: number;
  /** Read only these top-level variables (others are skipped; a compressed one is inflated only as far as its name). */
  only?: ReadonlySet<string>;
}

/** True when `bytes` start like a MAT v5 file (a 128-byte header whose text begins "MATLAB 5.0 MAT-file"). */
export function isMat5(bytes: Uint8Array): boolean {
  return bytes.length >= 128 && new TextDecoder('latin1').decode(bytes.subarray(0, 19)) === 'MATLAB 5.0 MAT-file';
}

export function parseMat5(bytes: Uint8Array, fileName: string, options: Mat5Options = {}): Map<string, MatValue> {
  if (!isMat5(bytes)) throw new CorruptOrTruncatedError(`${fileName} is not a MAT v5 file.`);
  const endian = new TextDecoder('latin1').decode(bytes.subarray(126, 128));
  if (endian === 'MI') throw new UnsupportedFormatError(`${fileName} is a big-endian MAT file, which is not supported.`);
  if (endian !== 'IM') throw new CorruptOrTruncatedError(`${fileName} has a corrupt MAT header (endian indicator "${endian}").`);
  const parser = new Mat5Parser(fileName, options.maxInflatedBytes ?? 512 << 20);
  const variables = new Map<string, MatValue>();
  let pos = 128;
  for (let elements = 1; pos + 8 <= bytes.length; elements++) {
    if (elements > maxElements) throw parser.truncated(`it holds more than ${maxElements.toLocaleString('en')} variables`);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const type = view.getUint32(pos, true);
    const size = view.getUint32(pos + 4, true);
    const end = pos + 8 + size;
    if (end > bytes.length) throw parser.truncated('a variable runs past the end of the file');
    let element = bytes.subarray(pos + 8, end);
    pos = type === mi.COMPRESSED ? end : pos + 8 + pad8(size);
    if (type === mi.COMPRESSED) {
      if (options.only) {
        const name = parser.peekCompressedName(element);
        if (name !== undefined && !options.only.has(name)) continue;
      }
      element = parser.inflate(element);
      const inner = new DataView(element.buffer, element.byteOffset, element.byteLength);
      if (element.length < 8 || inner.getUint32(0, true) !== mi.MATRIX) continue;
      const innerSize = inner.getUint32(4, true);
      if (8 + innerSize > element.length) throw parser.truncated('a compressed variable is shorter than its tag says');
      element = element.subarray(8, 8 + innerSize);
    } else if (type !== mi.MATRIX) {
      continue;
    }
    const name = parser.peekName(element);
    if (options.only && !options.only.has(name)) continue;
    variables.set(name, parser.matrix(element, 0).value);
  }
  return variables;
}

class Mat5Parser {
  readonly #fileName: string;
  readonly #maxInflated: number;
  /** Bytes inflated so far; and inflated to peek at names, counted apart (they are not kept) against the same bound. */
  #inflated = 0;
  #peeked = 0;

  constructor(fileName: string, maxInflated: number) {
    this.#fileName = fileName;
    this.#maxInflated = maxInflated;
  }

  truncated(what: string): CorruptOrTruncatedError {
    return new CorruptOrTruncatedError(`${this.#fileName} is corrupt or truncated: ${what}.`);
  }

  inflate(bytes: Uint8Array): Uint8Array {
    let out: Buffer;
    try {
      out = inflateSync(bytes, { maxOutputLength: Math.max(1, this.#maxInflated - this.#inflated) });
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw this.#tooLarge(cause);
      throw new CorruptOrTruncatedError(`${this.#fileName} has a compressed variable that does not decompress (${(cause as Error).message}).`, { cause });
    }
    this.#inflated += out.length;
    if (this.#inflated > this.#maxInflated) throw this.#tooLarge();
    return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  }

  /**
   * The name of a compressed variable, from the first bytes of its stream (at most ~1,000 times as many once
   * inflated); undefined when they do not hold it, and the variable must be inflated whole.
   */
  peekCompressedName(bytes: Uint8Array): string | undefined {
    let head: Uint8Array;
    try {
      const out = inflateSync(bytes.subarray(0, peekBytes), { finishFlush: constants.Z_SYNC_FLUSH });
      head = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    } catch {
      return undefined;
    }
    this.#peeked += head.length;
    if (this.#peeked > this.#maxInflated) throw this.#tooLarge();
    if (head.length < 8 || new DataView(head.buffer, head.byteOffset, 8).getUint32(0, true) !== mi.MATRIX) return undefined;
    try {
      const sub = new SubElements(head.subarray(8), this);
      sub.next();
      sub.next();
      const name = sub.next();
      return name && new TextDecoder('latin1').decode(name.data);
    } catch {
      // The start of the stream ends inside the name (or the variable is damaged): inflated whole, it will tell.
      return undefined;
    }
  }

  #tooLarge(cause?: unknown): CorruptOrTruncatedError {
    return new CorruptOrTruncatedError(
      `${this.#fileName} holds more than ${this.#maxInflated >> 20} MiB of compressed variables once inflated; save the data in a separate .fdt file.`,
      { cause },
    );
  }

  /** The name of a miMATRIX element without parsing its data. */
  peekName(element: Uint8Array): string {
    const sub = new SubElements(element, this);
    sub.next();
    sub.next();
    const name = sub.next();
    return name ? new TextDecoder('latin1').decode(name.data) : '';
  }

  /** Parses one miMATRIX element body. */
  matrix(element: Uint8Array, depth: number): { name: string; value: MatValue } {
    if (depth > maxDepth) throw this.truncated('values are nested too deeply');
    if (element.length === 0) return { name: '', value: { kind: 'numeric', className: 'double', dims: [0, 0], data: new Float64Array(0) } };
    const sub = new SubElements(element, this);
    const flags = sub.next();
    const dimsElement = sub.next();
    const nameElement = sub.next();
    if (!flags || !dimsElement || !nameElement || flags.data.length < 8) throw this.truncated('an array header is incomplete');
    const flagWord = new DataView(flags.data.buffer, flags.data.byteOffset, 8).getUint32(0, true);
    const className = mxClass[flagWord & 0xff] ?? 'unknown';
    const complex = (flagWord & 0x800) !== 0;
    const dims = Array.from(toNumeric(dimsElement.type, dimsElement.data, this));
    if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw this.truncated('an array has negative dimensions');
    const count = dims.reduce((a, b) => a * b, 1);
    const name = new TextDecoder('latin1').decode(nameElement.data);

    switch (className) {
      case 'char': {
        const data = sub.next();
        const codes = data ? toNumeric(data.type, data.data, this) : new Uint16Array(0);
        return { name, value: { kind: 'char', dims, text: charText(codes, dims, data?.type) } };
      }
      case 'cell': {
        if (count > element.length / 8) throw this.truncated('a cell array claims more elements than it has bytes');
        const items: MatValue[] = [];
        for (let i = 0; i < count; i++) items.push(this.#child(sub, depth));
        return { name, value: { kind: 'cell', dims, items } };
      }
      case 'struct':
      case 'object': {
        if (className === 'object') sub.next();
        const lengthElement = sub.next();
        const namesElement = sub.next();
        if (!lengthElement || !namesElement) throw this.truncated('a struct has no field names');
        const fieldLength = Number(toNumeric(lengthElement.type, lengthElement.data, this)[0] ?? 0);
        if (fieldLength < 1) throw this.truncated('a struct has an invalid field name length');
        const nFields = Math.floor(namesElement.data.length / fieldLength);
        const fields: string[] = [];
        for (let f = 0; f < nFields; f++) {
          const raw = namesElement.data.subarray(f * fieldLength, (f + 1) * fieldLength);
          const end = raw.indexOf(0);
          fields.push(new TextDecoder('latin1').decode(end < 0 ? raw : raw.subarray(0, end)));
        }
        if (count * nFields > element.length / 8) throw this.truncated('a struct array claims more elements than it has bytes');
        const items: Map<string, MatValue>[] = [];
        for (let i = 0; i < count; i++) {
          const item = new Map<string, MatValue>();
          for (const field of fields) item.set(field, this.#child(sub, depth));
          items.push(item);
        }
        if (className === 'object') return { name, value: { kind: 'other', className } };
        return { name, value: { kind: 'struct', dims, fields, items } };
      }
      case 'sparse':
      case 'unknown':
        return { name, value: { kind: 'other', className } };
      default: {
        const real = sub.next();
        if (!real) throw this.truncated('a numeric array has no data');
        if (complex) sub.next();
        const data = toNumeric(real.type, real.data, this);
        if (data.length !== count) throw this.truncated(`a ${dims.join('x')} array holds ${data.length} values`);
        return { name, value: { kind: 'numeric', className, dims, data } };
      }
    }
  }

  #child(sub: SubElements, depth: number): MatValue {
    const element = sub.next();
    if (!element) throw this.truncated('a cell or struct ends early');
    if (element.type !== mi.MATRIX) throw this.truncated('a cell or struct holds a non-array element');
    return this.matrix(element.data, depth + 1).value;
  }
}

/** Iterates the sub-elements of an element body: 8-byte tags, small-element format, 8-byte padding. */
class SubElements {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  readonly #parser: Mat5Parser;
  #pos = 0;

  constructor(bytes: Uint8Array, parser: Mat5Parser) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#parser = parser;
  }

  next(): { type: number; data: Uint8Array } | undefined {
    if (this.#pos + 8 > this.#bytes.length) return undefined;
    const first = this.#view.getUint32(this.#pos, true);
    if (first >>> 16 !== 0) {
      // Small data element: type and size share the first word; up to 4 bytes of data follow.
      const size = first >>> 16;
      if (size > 4) throw this.#parser.truncated('a small data element is larger than 4 bytes');
      const data = this.#bytes.subarray(this.#pos + 4, this.#pos + 4 + size);
      this.#pos += 8;
      return { type: first & 0xffff, data };
    }
    const size = this.#view.getUint32(this.#pos + 4, true);
    const start = this.#pos + 8;
    if (start + size > this.#bytes.length) throw this.#parser.truncated('an element runs past its parent');
    this.#pos = start + pad8(size);
    return { type: first, data: this.#bytes.subarray(start, start + size) };
  }
}

function pad8(n: number): number {
  return (n + 7) & ~7;
}

function toNumeric(type: number, bytes: Uint8Array, parser: Mat5Parser): MatNumericArray {
  const size = miSize[type];
  if (size === undefined || type === mi.INT64 || type === mi.UINT64) {
    if (type === mi.INT64 || type === mi.UINT64) {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const out = new Float64Array(Math.floor(bytes.length / 8));
      for (let i = 0; i < out.length; i++) out[i] = Number(type === mi.INT64 ? view.getBigInt64(i * 8, true) : view.getBigUint64(i * 8, true));
      return out;
    }
    throw parser.truncated(`an element has unknown data type ${type}`);
  }
  const length = Math.floor(bytes.length / size);
  // A view where the bytes are aligned for one, as the elements of a file or an inflated variable are (8-byte
  // tags and padding): a copy would double what a large array costs.
  const data = bytes.byteOffset % size === 0 ? bytes : bytes.slice(0, length * size);
  const { buffer, byteOffset } = data;
  switch (type) {
    case mi.INT8:
      return new Int8Array(buffer, byteOffset, length);
    case mi.UINT8:
    case mi.UTF8:
      return new Uint8Array(buffer, byteOffset, length);
    case mi.INT16:
      return new Int16Array(buffer, byteOffset, length);
    case mi.UINT16:
    case mi.UTF16:
      return new Uint16Array(buffer, byteOffset, length);
    case mi.INT32:
      return new Int32Array(buffer, byteOffset, length);
    case mi.UINT32:
    case mi.UTF32:
      return new Uint32Array(buffer, byteOffset, length);
    case mi.SINGLE:
      return new Float32Array(buffer, byteOffset, length);
    default:
      return new Float64Array(buffer, byteOffset, length);
  }
}

/** Char arrays are column-major: a 1xN array is the text; an MxN array is M rows, joined with newlines. */
function charText(codes: MatNumericArray, dims: number[], type: number | undefined): string {
  if (type === mi.UTF8) return new TextDecoder('utf-8').decode(codes as Uint8Array);
  const rows = dims[0] ?? 1;
  const cols = dims.length > 1 ? codes.length / Math.max(1, rows) : codes.length;
  if (rows <= 1) return codesToText(codes);
  const lines: string[] = [];
  for (let r = 0; r < rows; r++) {
    let line = '';
    for (let c = 0; c < cols; c++) line += String.fromCharCode(codes[c * rows + r]!);
    lines.push(line.trimEnd());
  }
  return lines.join('\n');
}

function codesToText(codes: MatNumericArray): string {
  let text = '';
  for (let i = 0; i < codes.length; i += 8192) text += String.fromCharCode(...Array.from(codes.subarray(i, i + 8192)));
  return text;
}
