/**
 * Keeps a few sink writes in flight while the next chunk is being encoded, so the converter does not wait
 * on each file or object write. The first failure is rethrown by the next `put` or by `drain`.
 */
import type { StoreSink } from './store-sink.js';

export class PutQueue implements StoreSink {
  readonly #sink: StoreSink;
  readonly #limit: number;
  readonly #pending = new Set<Promise<void>>();
  #error: unknown;

  constructor(sink: StoreSink, limit = 8) {
    this.#sink = sink;
    this.#limit = limit;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    this.#check();
    const write: Promise<void> = this.#sink.put(key, bytes).then(
      () => void this.#pending.delete(write),
      (err: unknown) => {
        this.#pending.delete(write);
        this.#error ??= err;
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

  #check(): void {
    if (this.#error !== undefined) throw this.#error;
  }
}
