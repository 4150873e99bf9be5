/**
 * Rate limits of device sign-in, one set per running server, shared by the JSON routes and the `/device`
 * page so that guessing codes through either counts against the same session and IP.
 */
import type { Deps } from '../deps.js';
import { isNdsError } from '../core/errors.js';
import { RateLimiter } from '../core/rate-limiter.js';

export interface DeviceLimits {
  /** Code pairs started from one IP. */
  start: RateLimiter;
  /** Unknown codes named by one browser session. */
  guessSession: RateLimiter;
  /** Unknown codes named from one IP. */
  guessIp: RateLimiter;
}

const byServer = new WeakMap<Deps, DeviceLimits>();

export function deviceLimits(deps: Deps): DeviceLimits {
  let limits = byServer.get(deps);
  if (!limits) {
    const clock = deps.clock;
    limits = {
      start: new RateLimiter({ limit: 30, windowMs: 60_000, clock }),
      guessSession: new RateLimiter({ limit: 10, windowMs: 15 * 60_000, clock }),
      guessIp: new RateLimiter({ limit: 50, windowMs: 15 * 60_000, clock }),
    };
    byServer.set(deps, limits);
  }
  return limits;
}

/**
 * Runs a look-up, confirm or deny of a typed code. A code that names nothing counts as a guess against the
 * session and the IP; past the limit every attempt answers `rate_limited` (429) before touching the database.
 */
export async function guardCodeGuess<T>(deps: Deps, who: { sessionHash?: string; ip: string }, action: () => Promise<T>): Promise<T> {
  const limits = deviceLimits(deps);
  const sessionKey = who.sessionHash ?? 'none';
  limits.guessSession.check(sessionKey);
  limits.guessIp.check(who.ip);
  try {
    return await action();
  } catch (err) {
    if (isNdsError(err, 'device_code_unknown')) {
      limits.guessSession.hit(sessionKey);
      limits.guessIp.hit(who.ip);
    }
    throw err;
  }
}
