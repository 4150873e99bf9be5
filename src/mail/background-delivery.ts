/**
 * Delivery of a posted mail after the request that posted it has answered, so that no answer waits on the relay:
 * a mailing route then takes the same time, and answers alike, whether it mails or not, and whether the relay is
 * up or down (docs/security.md). The messages wait in memory only: a sign-in code is never stored in clear, so
 * there is no durable queue. A try that fails is logged and tried again; a message still undelivered when the
 * process stops is logged as dropped, and its reader asks for another code.
 */
import type { Logger } from '../core/log.js';
import { loggedSubject } from './subject-log.js';

/** The waits before the second and the third try; after the third, the message is given up (and logged). */
export const RETRY_DELAYS_MS: readonly number[] = [2_000, 20_000];
/** Messages waiting at once at most; one more is dropped and logged (the mail rate limits keep far below it). */
export const MAX_WAITING = 1000;

/** What the log may say of a message: its recipient and (masked) subject. */
interface Addressed {
  to: string;
  subject: string;
}

export class BackgroundDelivery<M extends Addressed> {
  readonly #send: (message: M) => Promise<void>;
  readonly #log: Logger;
  readonly #pending = new Set<Promise<void>>();
  readonly #wakers = new Set<() => void>();
  #closing = false;

  constructor(send: (message: M) => Promise<void>, log: Logger) {
    this.#send = send;
    this.#log = log;
  }

  /** Starts delivering `message` and returns at once; never throws. */
  post(message: M): void {
    if (this.#pending.size >= MAX_WAITING) {
      this.#log.error({ to: message.to, subject: loggedSubject(message.subject) }, 'a mail was dropped: too many mails wait for the relay');
      return;
    }
    const delivery: Promise<void> = this.#deliver(message).finally(() => this.#pending.delete(delivery));
    this.#pending.add(delivery);
  }

  async #deliver(message: M): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#send(message);
        return;
      } catch (err) {
        const last = attempt > RETRY_DELAYS_MS.length;
        const what = last ? 'a mail could not be delivered and is given up' : 'a mail could not be delivered; it will be tried again';
        this.#log.warn({ err, to: message.to, subject: loggedSubject(message.subject), attempt }, what);
        if (last) return;
        await this.#wait(RETRY_DELAYS_MS[attempt - 1]!);
      }
    }
  }

  /** Waits `ms`, or less once closing starts (each message left then gets its remaining tries at once). */
  #wait(ms: number): Promise<void> {
    if (this.#closing) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#wakers.add(wake);
    });
  }

  /** Resolves once every message posted so far (and any posted meanwhile) is delivered or given up. */
  async delivered(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Ends the waits between tries and resolves when every message is done, or after `limitMs` (the rest is dropped, logged). */
  async close(limitMs: number): Promise<void> {
    this.#closing = true;
    for (const wake of [...this.#wakers]) wake();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), limitMs);
    });
    const outcome = await Promise.race([this.delivered().then(() => 'done' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') this.#log.error({ undelivered: this.#pending.size }, 'mails still undelivered at shutdown are dropped');
  }
}
