/** A bounded pool of asynchronous tasks for the transfers of `nds datasets upload`. */
/** At most `limit` tasks at a time; after the first failure no new task starts, and `drain` throws it. */
export class TaskPool {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];
  readonly #tasks = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  constructor(limit: number) {
    this.#limit = limit;
  }

  add(task: () => Promise<void>): void {
    const run = (async () => {
      // A finishing task hands its slot straight to the next waiter, so the limit holds exactly.
      if (this.#running >= this.#limit) await new Promise<void>((resolve) => this.#waiting.push(resolve));
      else this.#running++;
      try {
        if (!this.#failure) await task();
      } catch (error) {
        this.#failure ??= { error };
      } finally {
        const next = this.#waiting.shift();
        if (next) next();
        else this.#running--;
      }
    })();
    this.#tasks.add(run);
    void run.finally(() => this.#tasks.delete(run));
  }

  /** Tasks added and not yet finished (running or waiting). */
  get pending(): number {
    return this.#tasks.size;
  }

  /** Resolves once fewer than `n` tasks are pending (or one has failed). */
  async below(n: number): Promise<void> {
    while (this.#tasks.size >= n && !this.#failure) await Promise.race([...this.#tasks]);
  }

  throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }

  async drain(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
    this.throwIfFailed();
  }
}

