/**
 * Keeps a few sink writes in flight while the next chunk is being encoded, so the converter does not wait
 * on each file or object write. The first failure is rethrown by the next `put` or by `drain`. `put`
 * returns before the write is done: `written` hears when each write's bytes are free again.
 */
import type { StoreSink } from './store-sink.js';

export class PutQueue implements StoreSink {
  readonly #sink: StoreSink;
  readonly #limit: number;
  readonly #written: ((bytes: Uint8Array) => void) | undefined;
  readonly #pending = new Set<Promise<void>>();
  #error: unknown;

  /** `limit`: writes in flight (default 8). `written`: called with each put's bytes once its write settled. */
  constructor(sink: StoreSink, limit = 8, written?: (bytes: Uint8Array) => void) {
    this.#sink = sink;
    this.#limit = limit;
    this.#written = written;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    this.#check();
    const write: Promise<void> = this.#sink.put(key, bytes).then(
      () => {
        this.#pending.delete(write);
        this.#written?.(bytes);
      },
      (err: unknown) => {
        this.#pending.delete(write);
        this.#error ??= err;
        this.#written?.(bytes);
      },
    );
    this.#pending.add(write);
    if (this.#pending.size >= this.#limit) await Promise.race(this.#pending);
    this.#check();
  }

  /** Waits for every write; throws the first failure. */
  async drain(): Promise<void> {
    await Promise.all(this.#pending);
    this.#check();
  }

  /**
   * Waits for every write in flight to end, failed or not, and throws nothing: after a failure, so that no write
   * of the failed store lands after its caller cleaned up (a staging folder removed, say).
   */
  async settle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled(this.#pending);
  }

  #check(): void {
    if (this.#error !== undefined) throw this.#error;
  }
}
