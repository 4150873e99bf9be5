/**
 * How many MCP requests a caller may make: each JSON-RPC request (a tool call, a resource read, a listing)
 * counts as one call of the HTTP API, by the caller's account, or by address for anonymous callers. A named
 * limiter of the server's `RateLimits` service (`core/rate-limiter.ts`, made by `lifecycle.ts`), so every
 * process of the service counts against one limit. `spendMcpRequests` is the one place the endpoint spends it.
 */
import type { RateLimiter, RateLimits } from '../core/rate-limiter.js';

/** Requests one caller may make in a minute. */
export const MCP_REQUESTS_PER_MINUTE = 600;

export function createMcpLimits(limits: RateLimits): RateLimiter {
  return limits.limiter({ name: 'mcp.requests', points: MCP_REQUESTS_PER_MINUTE, durationMs: 60_000 });
}

/** Counts `n` requests of `who`; throws `rate_limited` (429, Retry-After) before any is run when the window is spent. */
export async function spendMcpRequests(limits: RateLimiter, who: string, n: number): Promise<void> {
  await limits.spend(who, n);
}
