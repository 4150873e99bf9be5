/**
 * Work of `nds serve` that runs every so often in the background (sweeps, refreshes): one round at a time, a
 * round due while another runs is run after it rather than beside it, the timer keeps no process alive, and
 * `stop` waits for the round under way. A round handles its own failures; one it lets through is dropped so
 * that the next round still runs.
 */
export interface Periodic {
  /** Runs a round now, after the one under way; resolves when it is done. */
  tick(): Promise<void>;
  /** No round starts after this; resolves when the one under way is done. */
  stop(): Promise<void>;
}

/**
 * Runs `round` every `intervalMs`, and once at once unless `startNow` is false. `round` is told whether the
 * work was stopped, so that a long round can end early.
 */
export function runPeriodically(round: (stopped: () => boolean) => Promise<unknown>, intervalMs: number, options: { startNow?: boolean } = {}): Periodic {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = running.then(async () => {
      if (stopped) return;
      await round(() => stopped).catch(() => undefined);
    });
    return running;
  };
  const timer = setInterval(() => void tick(), intervalMs);
  timer.unref();
  if (options.startNow ?? true) void tick();
  return {
    tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
