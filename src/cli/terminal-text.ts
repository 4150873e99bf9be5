/**
 * Text a server or another user chose, made safe to print on a terminal (docs/security.md, "What clients
 * trust"). A terminal obeys the controls it is given: ESC ] 52 writes the clipboard, ESC ] 8 makes a link whose
 * target is not what it shows, CR overwrites the line just printed, U+202E reverses what follows. Each such
 * character is shown instead as an escape (`\x1b`, `\u{202e}`), so the person sees that it was there.
 */
import { CONTROL_CHARACTERS } from '../core/text-controls.js';

function escaped(ch: string): string {
  const code = ch.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/** `text` with every terminal control shown as an escape; line breaks stay unless `oneLine`. */
export function terminalSafe(text: string, options: { oneLine?: boolean } = {}): string {
  if (options.oneLine) return text.replace(CONTROL_CHARACTERS, escaped);
  return text.split('\n').map((line) => line.replace(CONTROL_CHARACTERS, escaped)).join('\n');
}
