/** Values read from a MATLAB file, by either container (MAT v5 or v7.3/HDF5), in one small shape. */

export type MatNumericArray = Float64Array | Float32Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;

export type MatValue =
  /** `data` as the file stores it, which may be a smaller type than `className` (a double array stored as bytes). */
  | { kind: 'numeric'; className: string; dims: number[]; data: MatNumericArray }
  | { kind: 'char'; dims: number[]; text: string }
  | { kind: 'cell'; dims: number[]; items: MatValue[] }
  | { kind: 'struct'; dims: number[]; fields: string[]; items: Map<string, MatValue>[] }
  | { kind: 'other'; className: string };

/** The first number of a numeric value, or undefined. */
export function matNumber(value: MatValue | undefined): number | undefined {
  if (value?.kind !== 'numeric' || value.data.length === 0) return undefined;
  return Number(value.data[0]);
}

/** The text of a char value (rows joined), or undefined. */
export function matString(value: MatValue | undefined): string | undefined {
  return value?.kind === 'char' ? value.text : undefined;
}

/** A field of element `index` of a struct value. */
export function matField(value: MatValue | undefined, field: string, index = 0): MatValue | undefined {
  return value?.kind === 'struct' ? value.items[index]?.get(field) : undefined;
}
