/**
 * Rate limits of the sign-in routes (codes, passwords, legacy routes), one set per running server (made by
 * `lifecycle.ts`). Keys are addresses and IPs, never secrets.
 */
import type { Clock } from '../core/clock.js';
import { RateLimiter } from '../core/rate-limiter.js';

const WINDOW_MS = 15 * 60_000;

export interface SignInLimits {
  /** Codes, verification mails and key links sent to one address. */
  mailPerAddress: RateLimiter;
  /** Mails of any kind asked for from one IP. */
  mailPerIp: RateLimiter;
  /** Wrong codes and passwords from one IP. */
  failuresPerIp: RateLimiter;
  /** Wrong passwords for one account name. */
  failuresPerLogin: RateLimiter;
  /**
   * Wrong mailed codes for one address (its account): each code allows 5 tries, but new codes can be asked
   * for, so this bounds the guesses an account takes whatever the codes.
   */
  codeFailuresPerAccount: RateLimiter;
  /** Wrong mailed codes from one IP, whatever the address: one client guessing at many accounts. */
  codeFailuresPerIp: RateLimiter;
}

/** Wrong codes an address takes in 15 minutes; the next attempt, even with the right code, answers 429. */
export const CODE_FAILURES_PER_ACCOUNT = 10;
/** Wrong codes an IP sends in 15 minutes, over all addresses. */
export const CODE_FAILURES_PER_IP = 20;

export function createSignInLimits(clock: Clock): SignInLimits {
  return {
    mailPerAddress: new RateLimiter({ limit: 5, windowMs: WINDOW_MS, clock }),
    mailPerIp: new RateLimiter({ limit: 30, windowMs: WINDOW_MS, clock }),
    failuresPerIp: new RateLimiter({ limit: 50, windowMs: WINDOW_MS, clock }),
    failuresPerLogin: new RateLimiter({ limit: 10, windowMs: WINDOW_MS, clock }),
    codeFailuresPerAccount: new RateLimiter({ limit: CODE_FAILURES_PER_ACCOUNT, windowMs: WINDOW_MS, clock }),
    codeFailuresPerIp: new RateLimiter({ limit: CODE_FAILURES_PER_IP, windowMs: WINDOW_MS, clock }),
  };
}

/** Checks then counts one hit for each `[limiter, key]` pair: all are checked before any is counted. */
export function spend(...pairs: Array<[RateLimiter, string]>): void {
  for (const [limiter, key] of pairs) limiter.check(key);
  for (const [limiter, key] of pairs) limiter.hit(key);
}

/**
 * Runs a sign-in attempt (a code, a password) within failure limits: every `[limiter, key]` is checked
 * first (429 past its limit, before the database is asked), and counted when the attempt fails as `isFailure`
 * says (a wrong code or password, not a refusal for another reason).
 */
export async function limitFailures<T>(pairs: Array<[RateLimiter, string]>, isFailure: (err: unknown) => boolean, action: () => Promise<T>): Promise<T> {
  for (const [limiter, key] of pairs) limiter.check(key);
  try {
    return await action();
  } catch (err) {
    if (isFailure(err)) for (const [limiter, key] of pairs) limiter.hit(key);
    throw err;
  }
}
