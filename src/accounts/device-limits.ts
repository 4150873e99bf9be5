/**
 * Rate limits of device sign-in, one set per running server (made by `lifecycle.ts`), shared by the JSON
 * routes and the `/device` page so that guessing codes through either counts against the same session and IP.
 */
import type { Clock } from '../core/clock.js';
import { isNdsError } from '../core/errors.js';
import { RateLimiter } from '../core/rate-limiter.js';
import { limitFailures } from './sign-in-limits.js';

export interface DeviceLimits {
  /** Code pairs started from one IP. */
  start: RateLimiter;
  /** Unknown codes named by one browser session. */
  guessSession: RateLimiter;
  /** Unknown codes named from one IP. */
  guessIp: RateLimiter;
}

export function createDeviceLimits(clock: Clock): DeviceLimits {
  return {
    start: new RateLimiter({ limit: 30, windowMs: 60_000, clock }),
    guessSession: new RateLimiter({ limit: 10, windowMs: 15 * 60_000, clock }),
    guessIp: new RateLimiter({ limit: 50, windowMs: 15 * 60_000, clock }),
  };
}

/**
 * Runs a look-up, confirm or deny of a typed code. A code that names nothing counts as a guess against the
 * session and the IP; past the limit every attempt answers `rate_limited` (429) before touching the database.
 */
export function guardCodeGuess<T>(limits: DeviceLimits, who: { sessionHash?: string; ip: string }, action: () => Promise<T>): Promise<T> {
  return limitFailures([[limits.guessSession, who.sessionHash ?? 'none'], [limits.guessIp, who.ip]], (err) => isNdsError(err, 'device_code_unknown'), action);
}
