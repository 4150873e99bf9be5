/**
 * Random secrets and their hashes. Keys, session ids and device codes are stored only as SHA-256;
 * passwords as scrypt. Comparisons of secrets are constant-time.
 */
import { createHash, randomBytes, randomInt, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** Hex SHA-256 of a string (as UTF-8) or of bytes: secrets, manifests, content checks. */
export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex');
}

/** `nds_` + base64url(32 random bytes). */
export function newApiKey(): string {
  return `nds_${randomBytes(32).toString('base64url')}`;
}

/** Display prefix of a key: its first 12 characters and an ellipsis. */
export function keyPrefix(key: string): string {
  return `${key.slice(0, 12)}…`;
}

export function newOpaqueToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** A string of `length` characters drawn uniformly from `alphabet`. */
export function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // Compare against itself on a length mismatch so the time does not reveal where they differ.
  if (x.length !== y.length) {
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, 32);
  return `scrypt$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), 32);
  return constantTimeEqual(actual.toString('base64url'), hash);
}
