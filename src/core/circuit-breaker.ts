/**
 * A circuit breaker in front of a service that may go away (the gateway's Redis). A failure opens it: calls
 * are refused at once, so a dead service costs nothing, for a cool-down. Then it is half-open: one call goes
 * through as a probe; its success closes the breaker, its failure opens it for another cool-down.
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

export class CircuitBreaker {
  readonly #coolDownMs: number;
  readonly #now: () => number;
  #state: BreakerState = 'closed';
  /** When the open breaker lets a probe through; when a half-open probe is given up for lost. */
  #until = 0;

  /** `now` gives milliseconds (tests move it forward). */
  constructor(coolDownMs: number, now: () => number = Date.now) {
    this.#coolDownMs = coolDownMs;
    this.#now = now;
  }

  get state(): BreakerState {
    return this.#state;
  }

  /**
   * Whether a call may go now. Open: no, until the cool-down ends; then true once (the probe), and no again
   * until the probe reports, or for a cool-down if it never does.
   */
  allow(): boolean {
    if (this.#state === 'closed') return true;
    if (this.#now() < this.#until) return false;
    this.#state = 'half-open';
    this.#until = this.#now() + this.#coolDownMs;
    return true;
  }

  /** A call went well: the breaker closes. Returns true when it was not closed (the service is back). */
  succeeded(): boolean {
    if (this.#state === 'closed') return false;
    this.#state = 'closed';
    return true;
  }

  /** A call failed or timed out: the breaker opens for a cool-down. Returns true when it was closed (an outage begins). */
  failed(): boolean {
    const wasClosed = this.#state === 'closed';
    this.#state = 'open';
    this.#until = this.#now() + this.#coolDownMs;
    return wasClosed;
  }
}
