/** Helpers for fixed-width ASCII header fields (EDF/BDF): printable text, NUL- or space-padded. */

const latin1 = new TextDecoder('latin1');

/** The field's text with padding (spaces and NULs) removed from both ends. */
export function asciiField(bytes: Uint8Array, start: number, length: number): string {
  return latin1.decode(bytes.subarray(start, start + length)).replace(/^[\s\0]+|[\s\0]+$/g, '');
}

/** A decimal number, or undefined when the field is empty or not a number. */
export function numberField(bytes: Uint8Array, start: number, length: number): number | undefined {
  const text = asciiField(bytes, start, length);
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) ? value : undefined;
}

/** An integer, or undefined when the field is empty, fractional or not a number. */
export function integerField(bytes: Uint8Array, start: number, length: number): number | undefined {
  const value = numberField(bytes, start, length);
  return value !== undefined && Number.isInteger(value) ? value : undefined;
}
