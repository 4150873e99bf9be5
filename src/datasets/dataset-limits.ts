/**
 * Rate limits of what a dataset action costs beyond its own request, named limiters of the server's one
 * `RateLimits` service (`core/rate-limiter.ts`, made by `lifecycle.ts`), so every process of the service counts
 * against the same limits (decision 0017). Keys are account ids.
 * - Member-added mails (`dataset-members.ts`): an account may add someone, remove them and add them again in a
 *   loop, each time with a dataset name of its choosing; past these limits the member is still added, just not
 *   mailed, so the service's mail never becomes a stranger's megaphone.
 * - Sandbox datasets made (`create-dataset.ts`): `SANDBOX_DATASETS_MAX` bounds what an account holds at once,
 *   but `/sandbox/reset` frees them again; this bounds what it takes from the service's million sandbox ids.
 */
import type { RateLimiter, RateLimits } from '../core/rate-limiter.js';

const HOUR_MS = 3600_000;

/** Member-added mails one account receives in an hour, whoever adds it. */
export const MEMBER_MAILS_PER_RECIPIENT = 5;
/** Member-added mails one account's additions send in an hour, to anyone. */
export const MEMBER_MAILS_PER_ACTOR = 30;
/**
 * Sandbox datasets one account (not an administrator) makes in a day. The training takes one or two; at this
 * rate one account would need 137 years to use up the sandbox ids.
 */
export const SANDBOX_CREATIONS_PER_DAY = 20;

export interface DatasetLimits {
  memberMailsPerRecipient: RateLimiter;
  memberMailsPerActor: RateLimiter;
  sandboxCreations: RateLimiter;
}

export function createDatasetLimits(limits: RateLimits): DatasetLimits {
  return {
    memberMailsPerRecipient: limits.limiter({ name: 'datasets.member-mails-per-recipient', points: MEMBER_MAILS_PER_RECIPIENT, durationMs: HOUR_MS }),
    memberMailsPerActor: limits.limiter({ name: 'datasets.member-mails-per-actor', points: MEMBER_MAILS_PER_ACTOR, durationMs: HOUR_MS }),
    sandboxCreations: limits.limiter({ name: 'datasets.sandbox-creations', points: SANDBOX_CREATIONS_PER_DAY, durationMs: 24 * HOUR_MS }),
  };
}
