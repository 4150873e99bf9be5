/** Decodes header text by its declared codepage: UTF-8, ANSI (cp1252), or latin-1 for old files without one. */

const fallback = new TextDecoder('latin1');

export interface DecodedText {
  text: string;
  codepage: string;
  /** True when the text was declared UTF-8 but is not, and latin-1 was used instead. */
  recovered: boolean;
}

export function decodeDeclared(bytes: Uint8Array): DecodedText {
  const probe = fallback.decode(bytes.subarray(0, Math.min(bytes.length, 4096)));
  const declared = /^\s*Codepage\s*=\s*(\S+)/im.exec(probe)?.[1]?.toUpperCase();
  if (declared === 'UTF-8' || declared === 'UTF8') {
    try {
      return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), codepage: 'UTF-8', recovered: false };
    } catch {
      return { text: fallback.decode(bytes), codepage: 'latin-1', recovered: true };
    }
  }
  if (declared === 'ANSI') return { text: new TextDecoder('windows-1252').decode(bytes), codepage: 'ANSI', recovered: false };
  return { text: fallback.decode(bytes), codepage: declared ?? 'latin-1', recovered: false };
}
