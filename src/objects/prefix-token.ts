/**
 * Temporary object credentials scoped to one key prefix (`<dataset id>/`), for reading or for writing:
 * `ndso_<payload>.<hmac>`, where the payload names the prefix, the access, the expiry, and the account and
 * sign-in the token was minted under. The nds server honours them on `/objects/<key>`; a key outside the
 * prefix, another access, a later time or any change to the token is refused, and a read is honoured only
 * while that account may still read the dataset through that sign-in (`datasets/dataset-access.ts`
 * `mayStillRead`).
 */
import type { ObjectUrlSigner } from './object-url-signer.js';
import { sameText } from './object-url-signer.js';

export type TokenAccess = 'read' | 'write';

export interface PrefixTokenClaims {
  prefix: string;
  access: TokenAccess;
  /** Unix seconds. */
  expires: number;
  /** The account the token was minted for; null when minted for anyone (a public dataset, no sign-in). */
  user: number | null;
  /** The API key or session it was minted under (`accounts/sign-in-of-credential.ts`); none for anyone's. */
  signIn?: string;
}

export function mintPrefixToken(signer: ObjectUrlSigner, claims: PrefixTokenClaims): string {
  const payload = Buffer.from(JSON.stringify({ p: claims.prefix, a: claims.access, e: claims.expires, u: claims.user, s: claims.signIn })).toString('base64url');
  return `ndso_${payload}.${signer.mac(`token\n${payload}`)}`;
}

/**
 * The claims of a token this signer minted; `undefined` for anything else (forged, altered, malformed, or
 * minted before tokens named their account).
 */
export function readPrefixToken(signer: ObjectUrlSigner, token: string): PrefixTokenClaims | undefined {
  const m = /^ndso_([A-Za-z0-9_-]+)\.([0-9a-f]{64})$/.exec(token);
  if (!m || !sameText(signer.mac(`token\n${m[1]}`), m[2])) return undefined;
  try {
    const { p, a, e, u, s } = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8')) as { p: unknown; a: unknown; e: unknown; u: unknown; s: unknown };
    if (typeof p !== 'string' || (a !== 'read' && a !== 'write') || typeof e !== 'number') return undefined;
    if (u !== null && !Number.isSafeInteger(u)) return undefined;
    if (s !== undefined && typeof s !== 'string') return undefined;
    return { prefix: p, access: a, expires: e, user: u as number | null, ...(s === undefined ? {} : { signIn: s }) };
  } catch {
    return undefined;
  }
}

/** A content name: the SHA-256 its bytes must hash to. */
const CONTENT_NAME = /^[0-9a-f]{64}$/;

/**
 * Whether a token's claims allow `access` to `key` at `nowS` (unix seconds). A write token also reads, and
 * writes content keys only (`<prefix><sha256>`, whose bytes the store checks against their name): no other key
 * under its prefix, where a name the store does not check could pass for content.
 */
export function tokenAllows(claims: PrefixTokenClaims, access: TokenAccess, key: string, nowS: number): boolean {
  if (nowS >= claims.expires) return false;
  if (access === 'write' && claims.access !== 'write') return false;
  if (!key.startsWith(claims.prefix)) return false;
  return access === 'read' || CONTENT_NAME.test(key.slice(claims.prefix.length));
}
