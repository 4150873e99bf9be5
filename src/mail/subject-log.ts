/**
 * A subject as the log may hold it: a sign-in or verification code rides in its subject (to be read on a
 * phone's lock screen), and a code in a log signs its reader in. Every number of six or more digits is
 * masked (a dataset id such as nd000123 is not a number of its own and stays).
 */
export function loggedSubject(subject: string): string {
  return subject.replace(/\b\d{6,}\b/g, (digits) => '#'.repeat(digits.length));
}
