/**
 * HMAC signatures for the folder store's presigned URLs and for prefix-scoped object tokens: the nds server
 * serves `/objects/<key>` itself and honours only what it signed, until the expiry it signed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface UrlClaims {
  method: 'GET' | 'PUT';
  key: string;
  /** Unix seconds. */
  expires: number;
  size?: number;
  sha256?: string;
  /** A PUT's hex CRC-32 (a folder store's part URL, decision 0032). */
  crc32?: string;
  /**
   * The account a read URL was minted for (null: for anyone), which the server asks about at use; left out
   * for URLs bound to no account (the folder store's own presigned URLs).
   */
  user?: number | null;
  /** The API key or session a read URL was minted under (`accounts/sign-in-of-credential.ts`), asked about at use. */
  signIn?: string;
}

export class ObjectUrlSigner {
  readonly #secret: string;

  constructor(secret: string) {
    if (secret.length < 16) throw new RangeError('the object signing secret needs at least 16 characters');
    this.#secret = secret;
  }

  /** The signature of a URL's claims (hex HMAC-SHA256). */
  signUrl(claims: UrlClaims): string {
    const fields: Array<string | number> = ['url', claims.method, claims.key, claims.expires, claims.size ?? '', claims.sha256 ?? ''];
    // A line more only for URLs bound to an account or a CRC-32, so the MAC of any other URL is what it always was.
    if (claims.user !== undefined) fields.push(`user:${claims.user ?? '-'}`);
    if (claims.crc32 !== undefined) fields.push(`crc32:${claims.crc32}`);
    if (claims.signIn !== undefined) fields.push(`sign-in:${claims.signIn}`);
    return this.mac(fields.join('\n'));
  }

  /** True when `signature` is this signer's for exactly these claims (constant-time compare). */
  verifyUrl(claims: UrlClaims, signature: string): boolean {
    return sameText(this.signUrl(claims), signature);
  }

  mac(text: string): string {
    return createHmac('sha256', this.#secret).update(text).digest('hex');
  }
}

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
