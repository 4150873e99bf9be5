/**
 * Characters a person does not type into text a service shows others, and which a terminal or a mail obeys:
 * C0 and C1 controls, DEL, and the BiDi embeddings, overrides and isolates (U+202E shows `exe.txt` for
 * `txt.exe`). One rule for every form of input (the API's schemas, the web forms).
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;
/** The same, but a paragraph keeps its line breaks (`\n`, a form's `\r\n`) and tabs. */
const PARAGRAPH_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/u;

export const CONTROL_CHARACTER_PROBLEM = 'holds a control or text-direction character (such as ESC, CR, a newline or U+202E); remove it';

/** Whether one line of text (a name, a label, a keyword) holds no such character. */
export function isCleanLine(text: string): boolean {
  // `match`, not `test`: the expression is global (for replacing), and `test` would carry its position over.
  return text.match(CONTROL_CHARACTERS) === null;
}

/** Whether a paragraph (a description) holds none but line breaks and tabs. */
export function isCleanParagraph(text: string): boolean {
  return !PARAGRAPH_CONTROL.test(text);
}
