/**
 * The `Content-Disposition` of a download whose file name comes from a dataset (a recording's path, say), built so
 * that nothing in the name can end its parameter or add another (RFC 6266).
 */

/** RFC 8187 `attr-char`: what `filename*` holds as it is; every other byte of the UTF-8 name is percent-encoded. */
const ATTR_CHAR = /^[A-Za-z0-9!#$&+\-.^_`|~]$/;

/** What the ASCII `filename` keeps of the name; any other character is written `_`. */
const UNSAFE_IN_FALLBACK = /[^A-Za-z0-9._-]/gu;

/**
 * `attachment` with the name as a quoted `filename` of safe ASCII characters only and, when that is not the name
 * itself, the exact name as `filename*=UTF-8''…`, which browsers prefer to `filename` (RFC 6266 section 4.3).
 */
export function attachmentDisposition(fileName: string): string {
  const fallback = fileName.replace(UNSAFE_IN_FALLBACK, '_');
  if (fallback === fileName) return `attachment; filename="${fileName}"`;
  return `attachment; filename="${fallback}"; filename*=UTF-8''${percentEncoded(fileName)}`;
}

function percentEncoded(text: string): string {
  let out = '';
  // Buffer.from writes a lone surrogate as U+FFFD, so every name has bytes to encode.
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += byte < 0x80 && ATTR_CHAR.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
