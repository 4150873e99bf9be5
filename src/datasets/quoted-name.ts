/**
 * A dataset's name as a mail quotes it: one line. Names stored before the API refused control characters may
 * hold line breaks, and a mail nds sends must carry no line its owner wrote (a forged "The dataset:" link).
 */
export function quotedName(name: string): string {
  return name.replace(/[\s\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]+/gu, ' ').trim();
}
