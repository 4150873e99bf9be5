/**
 * How many catalogue and search requests (`GET /recordings`, `GET /datasets/:id/recordings`,
 * `GET /datasets/search`) an anonymous caller may make: each walks indexes of a table of a million rows, and
 * the routes answer anyone, so an address without a key or session has a budget a minute
 * (`ANONYMOUS_CATALOGUE_PER_MINUTE`, decision 0023). A named limiter of the server's `RateLimits` service
 * (`core/rate-limiter.ts`, made by `lifecycle.ts`): every process of the service counts against one limit.
 */
import type { Context } from 'hono';
import type { RateLimiter, RateLimits } from '../core/rate-limiter.js';
import type { AppEnv } from './app-env.js';
import { clientLimitKey } from './client-ip.js';
import { ErrorBody, jsonResponse } from './openapi-helpers.js';

/** The documented refusal of a route that counts anonymous requests. */
export const anonymousLimitResponse = jsonResponse(ErrorBody, 'rate_limited: this address made too many requests without a key in the last minute; wait Retry-After seconds, or sign in');

export function createCatalogueLimits(limits: RateLimits, perMinute: number): RateLimiter {
  return limits.limiter({ name: 'catalogue.anonymous', points: perMinute, durationMs: 60_000 });
}

/** Counts one request of an anonymous caller, by address; throws `rate_limited` (429, Retry-After) past the limit. */
export async function countAnonymousCatalogueRequest(c: Context<AppEnv>): Promise<void> {
  if (c.var.caller) return;
  await c.var.deps.catalogueLimits.spend(`ip:${clientLimitKey(c)}`);
}
