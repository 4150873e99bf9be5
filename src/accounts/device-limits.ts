/**
 * Rate limits of device sign-in, named limiters of the server's `RateLimits` service (made by `lifecycle.ts`),
 * shared by the JSON routes and the `/device` page so that guessing codes through either counts against the
 * same session and IP, in every process of the service.
 */
import { isNdsError } from '../core/errors.js';
import type { RateLimiter, RateLimits } from '../core/rate-limiter.js';
import { limitFailures } from './sign-in-limits.js';

export interface DeviceLimits {
  /** Code pairs started from one IP. */
  start: RateLimiter;
  /** Unknown codes named by one browser session. */
  guessSession: RateLimiter;
  /** Unknown codes named from one IP. */
  guessIp: RateLimiter;
}

export function createDeviceLimits(limits: RateLimits): DeviceLimits {
  return {
    start: limits.limiter({ name: 'device.start', points: 30, durationMs: 60_000 }),
    guessSession: limits.limiter({ name: 'device.guess-session', points: 10, durationMs: 15 * 60_000 }),
    guessIp: limits.limiter({ name: 'device.guess-ip', points: 50, durationMs: 15 * 60_000 }),
  };
}

/**
 * Runs a look-up, confirm or deny of a typed code. A code that names nothing counts as a guess against the
 * session and the IP; past the limit every attempt answers `rate_limited` (429) before touching the database.
 */
export function guardCodeGuess<T>(limits: DeviceLimits, who: { sessionHash?: string; ip: string }, action: () => Promise<T>): Promise<T> {
  return limitFailures([[limits.guessSession, who.sessionHash ?? 'none'], [limits.guessIp, who.ip]], (err) => isNdsError(err, 'device_code_unknown'), action);
}
