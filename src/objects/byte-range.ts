/** HTTP `Range` for one object (RFC 9110 section 14.1.2): single ranges only; anything else reads the whole object. */
import type { ByteRange } from './object-store.js';

/**
 * `bytes=a-b`, `bytes=a-` or `bytes=-n` → the inclusive range inside an object of `size` bytes;
 * `null` when there is no usable Range (read it all); `'unsatisfiable'` when the range starts past the end.
 */
export function parseSingleRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  if (start >= size) return 'unsatisfiable';
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (end < start) return null;
  return { start, end };
}

/** `Content-Range` of a 206 answer (`bytes a-b/size`), or, without a range, of a 416 answer (a star, then the size). */
export function contentRange(size: number, range?: ByteRange): string {
  return range ? `bytes ${range.start}-${range.end}/${size}` : `bytes */${size}`;
}
