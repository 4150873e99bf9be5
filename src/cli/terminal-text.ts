/**
 * Text a server or another user chose, made safe to print on a terminal (docs/security.md, "What clients
 * trust"). A terminal obeys the controls it is given: ESC ] 52 writes the clipboard, ESC ] 8 makes a link whose
 * target is not what it shows, CR overwrites the line just printed, U+202E reverses what follows. Each such
 * character is shown instead as an escape (`\x1b`, `\u{202e}`), so the person sees that it was there.
 */

/** C0 controls but the newline, DEL, C1 controls, and the BiDi embeddings, overrides and isolates. */
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;
/** The same, and the newline: a table cell or a one-line field is one line. */
const TERMINAL_CONTROL_OR_NEWLINE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;

function escaped(ch: string): string {
  const code = ch.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
}

/** `text` with every terminal control shown as an escape; line breaks stay unless `oneLine`. */
export function terminalSafe(text: string, options: { oneLine?: boolean } = {}): string {
  return text.replace(options.oneLine ? TERMINAL_CONTROL_OR_NEWLINE : TERMINAL_CONTROL, escaped);
}
