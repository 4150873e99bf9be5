/**
 * How many MCP requests a caller may make: each JSON-RPC request (a tool call, a resource read, a listing)
 * counts as one call of the HTTP API, by the caller's API key, or by address for anonymous callers. The
 * counters live in memory in the serving process (`core/rate-limiter.ts`), made once by `lifecycle.ts`.
 * `spendMcpRequests` is the one place the MCP endpoint spends them.
 */
import type { Clock } from '../core/clock.js';
import { RateLimiter } from '../core/rate-limiter.js';

/** Requests one caller may make in a minute. */
export const MCP_REQUESTS_PER_MINUTE = 600;

export function createMcpLimits(clock: Clock): RateLimiter {
  return new RateLimiter({ limit: MCP_REQUESTS_PER_MINUTE, windowMs: 60_000, clock });
}

/** Counts `n` requests of `who`; throws `rate_limited` (429, Retry-After) before any is run when the window is spent. */
export function spendMcpRequests(limits: RateLimiter, who: string, n: number): void {
  for (let i = 0; i < n; i++) {
    limits.check(who);
    limits.hit(who);
  }
}
