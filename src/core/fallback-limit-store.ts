/**
 * A shared limit store with this process's memory standing in while it is down. A failed or slow operation
 * (past `timeoutMs`) opens a circuit breaker: for a cool-down every count goes to memory at once, then one
 * count probes the store, and its success puts the store back in use. Limits hold all along: during an outage
 * each process counts on its own (a client spread over `n` processes gets up to `n` times the limit), and when
 * the store is back, what a key spent in this process's memory still counts, added to the store's count, until
 * its window ends. The outage and its end are logged once.
 */
import { CircuitBreaker } from './circuit-breaker.js';
import type { Logger } from './log.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import type { LimitStore, LimitWindow } from './rate-limiter.js';

export interface FallbackOptions {
  log: Logger;
  /** The store's name in the log: `the database`, `Redis`. */
  what: string;
  /** Milliseconds now, by the service's clock (tests move it forward). */
  now: () => number;
  /** Longest wait for one operation of the store, in ms; a slower one counts as a failure. Default 1000. */
  timeoutMs?: number;
  /** How long the store is left alone after a failure before one count probes it, in ms. Default 1000. */
  coolDownMs?: number;
}

export class FallbackLimitStore implements LimitStore {
  readonly #shared: LimitStore;
  readonly #memory = new MemoryLimitStore();
  readonly #breaker: CircuitBreaker;
  readonly #log: Logger;
  readonly #what: string;
  readonly #timeoutMs: number;

  constructor(shared: LimitStore, options: FallbackOptions) {
    this.#shared = shared;
    this.#breaker = new CircuitBreaker(options.coolDownMs ?? 1000, options.now);
    this.#log = options.log;
    this.#what = options.what;
    this.#timeoutMs = options.timeoutMs ?? 1000;
  }

  /** Whether counts go to memory now (the store failed and has not answered since). */
  get degraded(): boolean {
    return this.#breaker.state !== 'closed';
  }

  async add(key: string, points: number, durationMs: number, now: number): Promise<LimitWindow> {
    if (this.#breaker.allow()) {
      try {
        const window = await this.#withTimeout(this.#shared.add(key, points, durationMs, now));
        if (this.#breaker.succeeded()) this.#log.info({ store: this.#what }, `rate limits: ${this.#what} is back; counting there again`);
        const spentHere = this.#memory.pointsOf(key, now);
        return spentHere > 0 ? { ...window, points: window.points + spentHere } : window;
      } catch (err) {
        this.#failed(err);
      }
    }
    return { ...this.#memory.addNow(key, points, durationMs, now), local: true };
  }

  async takeBack(key: string, points: number, window: LimitWindow): Promise<void> {
    if (window.local) return this.#memory.takeBack(key, points, window);
    // Points the store counted stay there when it cannot take them back now: a client is never let through
    // more often for it.
    if (!this.#breaker.allow()) return;
    try {
      await this.#withTimeout(this.#shared.takeBack(key, points, window));
      this.#breaker.succeeded();
    } catch (err) {
      this.#failed(err);
    }
  }

  async close(): Promise<void> {
    await this.#memory.close();
    await this.#shared.close();
  }

  #failed(err: unknown): void {
    if (this.#breaker.failed()) {
      this.#log.warn({ err, store: this.#what }, `rate limits: ${this.#what} unavailable; counting in this process's memory until it is back`);
    }
  }

  #withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
      timer.unref();
    });
    // A late answer after the timeout is dropped; its rejection must not go unhandled.
    work.catch(() => undefined);
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }
}
