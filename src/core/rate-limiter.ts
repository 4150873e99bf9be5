/**
 * The rate limits of a server: one service (`RateLimits`, made by `lifecycle.ts`) hands out named limiters,
 * each "`points` per `durationMs` for one key" in fixed windows. Counts live in a `LimitStore` shared by every
 * process of the service (the database, or Redis), so `n` processes together allow no more than the limit;
 * a store that fails is stood in for by this process's memory (`fallback-limit-store.ts`). Keys are what a
 * limit is about (an address, an IP, a session hash); the store sees only their SHA-256, under the limiter's name.
 */
import type { Clock } from './clock.js';
import { NdsError } from './errors.js';
import { sha256Hex } from './secrets.js';

/** A key's counting window: the points spent in it, and when it ends (ms since the epoch, by the service's clock). */
export interface LimitWindow {
  points: number;
  resetAt: number;
  /** Counted in a fallback's memory rather than in its store (set by `FallbackLimitStore`). */
  local?: boolean;
}

/** Where counts live. Each operation is one atomic step of the store, safe when processes race. */
export interface LimitStore {
  /**
   * Adds `points` to `key`'s window and answers the window after the addition; a key with no window, or one
   * that ended at or before `now`, gets a new window of `durationMs` from `now`.
   */
  add(key: string, points: number, durationMs: number, now: number): Promise<LimitWindow>;
  /**
   * Takes `points` back from the window `add` answered, if it is still the key's (a window that ended and
   * began again is left alone); a window brought to zero points is removed, as if never opened.
   */
  takeBack(key: string, points: number, window: LimitWindow): Promise<void>;
  close(): Promise<void>;
}

/** A limit: `points` per `durationMs` for each key, under a name unique in the service. */
export interface LimitRule {
  name: string;
  points: number;
  durationMs: number;
}

/** Points spent by `RateLimiter.spend`, which can be given back when the attempt turns out not to count. */
export interface Spent {
  giveBack(): Promise<void>;
}

export class RateLimiter {
  readonly rule: LimitRule;
  readonly #store: LimitStore;
  readonly #clock: Clock;

  constructor(rule: LimitRule, store: LimitStore, clock: Clock) {
    this.rule = rule;
    this.#store = store;
    this.#clock = clock;
  }

  /**
   * Spends `points` of `key`'s window. Past the limit nothing is spent (the points are given back at once)
   * and it throws `rate_limited` (429) with `Retry-After`: the seconds until the window ends.
   */
  async spend(key: string, points = 1): Promise<Spent> {
    const storeKey = `${this.rule.name}:${sha256Hex(key)}`;
    const now = this.#clock.now().getTime();
    const window = await this.#store.add(storeKey, points, this.rule.durationMs, now);
    const giveBack = () => this.#store.takeBack(storeKey, points, window);
    if (window.points > this.rule.points) {
      await giveBack().catch(() => undefined);
      const retryAfter = Math.max(1, Math.ceil((window.resetAt - now) / 1000));
      throw new NdsError('rate_limited', { headers: { 'Retry-After': String(retryAfter) } });
    }
    return { giveBack };
  }
}

/** The service: named limiters over one store. */
export class RateLimits {
  readonly #store: LimitStore;
  readonly #clock: Clock;
  readonly #names = new Set<string>();

  constructor(store: LimitStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /** A limiter for `rule`; each name once (the name keeps its counts apart from the other limiters'). */
  limiter(rule: LimitRule): RateLimiter {
    if (this.#names.has(rule.name)) throw new Error(`rate limiter "${rule.name}" is already defined`);
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(rule.name)) throw new Error(`rate limiter name "${rule.name}": lower-case letters, digits, dots, dashes`);
    this.#names.add(rule.name);
    return new RateLimiter(rule, this.#store, this.#clock);
  }

  close(): Promise<void> {
    return this.#store.close();
  }
}

/**
 * Spends one point of each `[limiter, key]`, in order, all or nothing: a refusal gives back what the pairs
 * before it spent, and throws its `rate_limited`.
 */
export async function spendAll(pairs: ReadonlyArray<readonly [RateLimiter, string]>): Promise<Spent[]> {
  const spent: Spent[] = [];
  try {
    for (const [limiter, key] of pairs) spent.push(await limiter.spend(key));
    return spent;
  } catch (err) {
    await giveAllBack(spent);
    throw err;
  }
}

/** Gives back spent points; they are the store's to keep when it cannot take them (an outage): never throws. */
export async function giveAllBack(spent: readonly Spent[]): Promise<void> {
  await Promise.all(spent.map((s) => s.giveBack().catch(() => undefined)));
}
