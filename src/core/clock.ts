/** The time source of nds: real time in production; tests shift a clock forward instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Real time plus an offset that tests move with `advance` (10 minutes pass in a call, and a child process
 * polling in real time still sees time go by).
 */
export class ManualClock implements Clock {
  #offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.#offsetMs);
  }
  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}
