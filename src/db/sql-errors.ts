/**
 * The SQLSTATE codes nds answers in words (both engines report PostgreSQL's own): a row that names a row gone
 * meanwhile (a dataset deleted between its look-up and a write of its own), and a key taken by another writer.
 */
const FOREIGN_KEY_VIOLATION = '23503';
const UNIQUE_VIOLATION = '23505';

const codeOf = (err: unknown) => (err as { code?: string } | undefined)?.code;

export function isForeignKeyViolation(err: unknown): boolean {
  return codeOf(err) === FOREIGN_KEY_VIOLATION;
}

export function isUniqueViolation(err: unknown): boolean {
  return codeOf(err) === UNIQUE_VIOLATION;
}
