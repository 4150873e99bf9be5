/**
 * Assembles a small WebAssembly module from hand-written function bodies (the converter's SIMD loops: the view
 * pyramid's fold, 24-bit decoding): one memory of one 64 KiB page exported as `m`, and each function exported
 * under its name. No toolchain and no build step; `WebAssembly.validate` is the check, and each loop's test
 * compares it with the JavaScript it stands in for.
 */

/** One function: its parameters (all i32) and its body (locals declaration, code, final `end`). */
export interface SimdFunction {
  name: string;
  params: number;
  body: number[];
}

/** An unsigned LEB128 number. */
export function leb(value: number): number[] {
  const out: number[] = [];
  do {
    const low = value & 0x7f;
    value >>>= 7;
    out.push(value === 0 ? low : low | 0x80);
  } while (value !== 0);
  return out;
}

/** A signed LEB128 number (an `i32.const` operand). */
function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const low = value & 0x7f;
    value >>= 7;
    const done = (value === 0 && (low & 0x40) === 0) || (value === -1 && (low & 0x40) !== 0);
    out.push(done ? low : low | 0x80);
    if (done) return out;
  }
}

/** `local.get i`. */
export const localGet = (i: number): number[] => [0x20, i];
/** `local.set i`. */
export const localSet = (i: number): number[] => [0x21, i];
/** Adds `by` to the i32 local `i` (a pointer moving on). */
export const addToLocal = (i: number, by: number): number[] => [...localGet(i), 0x41, ...sleb(by), 0x6a, ...localSet(i)];

function section(id: number, bytes: number[]): number[] {
  return [id, ...leb(bytes.length), ...bytes];
}

const name = (text: string) => [text.length, ...Buffer.from(text)];

export function simdModuleBytes(functions: readonly SimdFunction[]): Uint8Array<ArrayBuffer> {
  const I32 = 0x7f;
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    // One type per function: (i32 × params) → ().
    ...section(0x01, [functions.length, ...functions.flatMap((f) => [0x60, f.params, ...Array<number>(f.params).fill(I32), 0x00])]),
    ...section(0x03, [functions.length, ...functions.map((_, i) => i)]),
    ...section(0x05, [0x01, 0x00, 0x01]),
    ...section(0x07, [functions.length + 1, ...name('m'), 0x02, 0x00, ...functions.flatMap((f, i) => [...name(f.name), 0x00, i])]),
    ...section(0x0a, [functions.length, ...functions.flatMap((f) => [...leb(f.body.length), ...f.body])]),
  ]);
}

/** The module's exports, or undefined where WebAssembly (or its SIMD) is missing. */
export function instantiateSimd(functions: readonly SimdFunction[]): WebAssembly.Exports | undefined {
  const bytes = simdModuleBytes(functions);
  if (typeof WebAssembly === 'undefined' || !WebAssembly.validate(bytes)) return undefined;
  return new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;
}
