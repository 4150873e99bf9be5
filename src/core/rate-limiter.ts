/**
 * A fixed-window counter per key, in memory: enough to cut off guessing (device codes, sign-in codes)
 * on one instance. Keys are hashed identifiers (session hash, IP), never secrets.
 */
import type { Clock } from './clock.js';
import { NdsError } from './errors.js';

export class RateLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #clock: Clock;
  readonly #hits = new Map<string, { count: number; resetAt: number }>();

  constructor(options: { limit: number; windowMs: number; clock: Clock }) {
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#clock = options.clock;
  }

  /** Throws `rate_limited` (429 with Retry-After) when `key` has used up its window. */
  check(key: string): void {
    const entry = this.#hits.get(key);
    const now = this.#clock.now().getTime();
    if (entry && entry.resetAt > now && entry.count >= this.#limit) {
      const retryAfter = Math.max(1, Math.ceil((entry.resetAt - now) / 1000));
      throw new NdsError('rate_limited', { headers: { 'Retry-After': String(retryAfter) } });
    }
  }

  /** Counts one hit against `key`. */
  hit(key: string): void {
    const now = this.#clock.now().getTime();
    const entry = this.#hits.get(key);
    if (!entry || entry.resetAt <= now) {
      this.#hits.set(key, { count: 1, resetAt: now + this.#windowMs });
      if (this.#hits.size > 100_000) this.#sweep(now);
    } else {
      entry.count++;
    }
  }

  #sweep(now: number): void {
    for (const [k, v] of this.#hits) if (v.resetAt <= now) this.#hits.delete(k);
  }
}
