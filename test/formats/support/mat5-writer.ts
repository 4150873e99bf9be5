/** Writes small MAT v5 files for tests (MATLAB "MAT-File Format": 128-byte header, miMATRIX elements). */
import { deflateSync } from 'node:zlib';

export type MatIn =
  | { double: number[]; dims?: number[] }
  | { single: Float32Array; dims: number[] }
  /** A double array stored as bytes, as MATLAB saves one whose values fit (miUINT8 data in an mxDOUBLE_CLASS array). */
  | { doubleAsBytes: Uint8Array; dims: number[] }
  | string
  | { struct: Record<string, MatIn>[]; dims?: number[] };

function element(type: number, data: Uint8Array): Uint8Array {
  const padded = (data.length + 7) & ~7;
  const out = new Uint8Array(8 + padded);
  const view = new DataView(out.buffer);
  view.setUint32(0, type, true);
  view.setUint32(4, data.length, true);
  out.set(data, 8);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const int32s = (values: number[]) => new Uint8Array(Int32Array.from(values).buffer);

function matrix(name: string, value: MatIn): Uint8Array {
  let cls: number;
  let dims: number[];
  let body: Uint8Array[];
  if (typeof value === 'string') {
    cls = 4;
    dims = [1, value.length];
    body = [element(4, new Uint8Array(Uint16Array.from(value, (ch) => ch.charCodeAt(0)).buffer))];
  } else if ('double' in value) {
    cls = 6;
    dims = value.dims ?? [1, value.double.length];
    body = [element(9, new Uint8Array(Float64Array.from(value.double).buffer))];
  } else if ('doubleAsBytes' in value) {
    cls = 6;
    dims = value.dims;
    body = [element(2, value.doubleAsBytes)];
  } else if ('single' in value) {
    cls = 7;
    dims = value.dims;
    body = [element(7, new Uint8Array(value.single.buffer, value.single.byteOffset, value.single.byteLength))];
  } else {
    cls = 2;
    dims = value.dims ?? [1, value.struct.length];
    const fields = [...new Set(value.struct.flatMap((s) => Object.keys(s)))];
    const len = 32;
    const names = new Uint8Array(len * fields.length);
    fields.forEach((f, i) => names.set(new TextEncoder().encode(f), i * len));
    body = [element(5, int32s([len])), element(1, names)];
    for (const item of value.struct) for (const f of fields) body.push(matrix('', item[f] ?? { double: [], dims: [0, 0] }));
  }
  const flags = element(6, new Uint8Array(new Uint32Array([cls, 0]).buffer));
  return element(14, concat([flags, element(5, int32s(dims)), element(1, new TextEncoder().encode(name)), ...body]));
}

export function writeMat5(variables: Record<string, MatIn>, compress = true): Uint8Array {
  const header = new Uint8Array(128).fill(0x20);
  header.set(new TextEncoder().encode('MATLAB 5.0 MAT-file, Platform: nds tests'));
  header.set([0, 0, 0, 0, 0, 0, 0, 0], 116);
  header.set([0x00, 0x01, 0x49, 0x4d], 124);
  const parts: Uint8Array[] = [header];
  for (const [name, value] of Object.entries(variables)) {
    const m = matrix(name, value);
    if (!compress) parts.push(m);
    else {
      const z = deflateSync(m);
      const tag = new Uint8Array(8);
      new DataView(tag.buffer).setUint32(0, 15, true);
      new DataView(tag.buffer).setUint32(4, z.length, true);
      parts.push(tag, new Uint8Array(z));
    }
  }
  return concat(parts);
}
