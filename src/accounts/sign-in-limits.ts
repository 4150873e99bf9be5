/**
 * Rate limits of the sign-in routes (codes, passwords, legacy routes), named limiters of the server's one
 * `RateLimits` service (made by `lifecycle.ts`), so every process of the service counts against the same
 * limits. Keys are addresses and IPs, never secrets.
 */
import { giveAllBack, spendAll, type RateLimiter, type RateLimits } from '../core/rate-limiter.js';

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

export function createSignInLimits(limits: RateLimits): SignInLimits {
  const rule = (name: string, points: number) => limits.limiter({ name: `sign-in.${name}`, points, durationMs: WINDOW_MS });
  return {
    mailPerAddress: rule('mail-per-address', 5),
    mailPerIp: rule('mail-per-ip', 30),
    failuresPerIp: rule('failures-per-ip', 50),
    failuresPerLogin: rule('failures-per-login', 10),
    codeFailuresPerAccount: rule('code-failures-per-account', CODE_FAILURES_PER_ACCOUNT),
    codeFailuresPerIp: rule('code-failures-per-ip', CODE_FAILURES_PER_IP),
  };
}

/** Counts one hit for each `[limiter, key]` pair, all or none: past any limit, 429 and nothing is counted. */
export async function spend(...pairs: Array<[RateLimiter, string]>): Promise<void> {
  await spendAll(pairs);
}

/**
 * Runs a sign-in attempt (a code, a password) within failure limits: a point of every `[limiter, key]` is
 * spent first (429 past its limit, before the database is asked), and kept only when the attempt fails as
 * `isFailure` says (a wrong code or password, not a refusal for another reason); otherwise it is given back.
 * Spending first means attempts racing each other, in one process or several, cannot pass the limit together.
 */
export async function limitFailures<T>(pairs: Array<[RateLimiter, string]>, isFailure: (err: unknown) => boolean, action: () => Promise<T>): Promise<T> {
  const spent = await spendAll(pairs);
  let result: T;
  try {
    result = await action();
  } catch (err) {
    if (!isFailure(err)) await giveAllBack(spent);
    throw err;
  }
  await giveAllBack(spent);
  return result;
}
