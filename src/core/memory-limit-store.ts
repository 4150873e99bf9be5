/**
 * Rate-limit counts in this process's memory: the stand-in while the shared store is down, and the store of
 * tests that need no database. Windows that ended are swept once the map holds 100,000 keys.
 */
import type { LimitStore, LimitWindow } from './rate-limiter.js';

const SWEEP_AT = 100_000;

export class MemoryLimitStore implements LimitStore {
  readonly #windows = new Map<string, { points: number; resetAt: number }>();

  async add(key: string, points: number, durationMs: number, now: number): Promise<LimitWindow> {
    return this.addNow(key, points, durationMs, now);
  }

  /** `add`, answered in the same turn (the fallback counts here when the shared store fails). */
  addNow(key: string, points: number, durationMs: number, now: number): LimitWindow {
    let window = this.#windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { points: 0, resetAt: now + durationMs };
      this.#windows.set(key, window);
      if (this.#windows.size > SWEEP_AT) this.#sweep(now);
    }
    window.points += points;
    return { points: window.points, resetAt: window.resetAt };
  }

  /** The points of `key`'s window, 0 when it has none or it ended at or before `now`. */
  pointsOf(key: string, now: number): number {
    const window = this.#windows.get(key);
    return window && window.resetAt > now ? window.points : 0;
  }

  async takeBack(key: string, points: number, counted: LimitWindow): Promise<void> {
    const window = this.#windows.get(key);
    if (!window || window.resetAt !== counted.resetAt) return;
    window.points -= points;
    if (window.points <= 0) this.#windows.delete(key);
  }

  async close(): Promise<void> {
    this.#windows.clear();
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(key);
  }
}
