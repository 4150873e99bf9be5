/**
 * How many clones and fetches of hosted repositories run at once (decision 0059): at most GIT_FETCHES_PER_CLIENT
 * for one client, at most GIT_FETCHES_MAX on this process in all. One more is refused at once, not queued: a
 * client past its share is answered 429, and anyone while the process serves its most, 503, both with
 * `Retry-After`. Counted in this process's memory: each `nds serve` of a cluster counts its own.
 */
import { NdsError } from '../core/errors.js';

export interface FetchSlotLimits {
  /** Reads one client may run at once (GIT_FETCHES_PER_CLIENT). */
  perClient: number;
  /** Reads this process runs at once, in all (GIT_FETCHES_MAX). */
  total: number;
}

/** A read's place among those running; `release` gives it back (once, however often it is called). */
export interface FetchSlot {
  release(): void;
}

/** Seconds a refused client is told to wait (`Retry-After`): most clones of a dataset's repository take fewer. */
export const FETCH_RETRY_AFTER_S = 10;

export class FetchSlots {
  readonly #limits: FetchSlotLimits;
  readonly #byClient = new Map<string, number>();
  #total = 0;

  constructor(limits: FetchSlotLimits) {
    this.#limits = limits;
  }

  /** Reads running now on this process (those that run git here). */
  get running(): number {
    return this.#total;
  }

  /** Reads of `client` (its limit key) running now. */
  runningFor(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }

  /**
   * Takes a slot for a read. `client` is the client's limit key, or undefined for a read not counted per client
   * (one another node of the service forwarded, which counted it there); `here` is false for a read this process
   * forwards to the node holding the repository (its git runs there, and is counted in all there). Throws
   * `rate_limited` (429) when the client already runs its most, `service_unavailable` (503) when the process
   * does; the caller tells the client to try again after `Retry-After` seconds.
   */
  take(client: string | undefined, here: boolean): FetchSlot {
    const headers = { 'Retry-After': String(FETCH_RETRY_AFTER_S) };
    if (client !== undefined && this.runningFor(client) >= this.#limits.perClient) {
      throw new NdsError('rate_limited', {
        message: `Your address already runs ${this.#limits.perClient} git clones or fetches from this server, the most it may at once (GIT_FETCHES_PER_CLIENT); let one finish, then try again.`,
        headers,
      });
    }
    if (here && this.#total >= this.#limits.total) {
      throw new NdsError('service_unavailable', {
        message: `This server already serves ${this.#limits.total} git clones and fetches, the most it serves at once (GIT_FETCHES_MAX); try again in a few seconds.`,
        headers,
      });
    }
    if (client !== undefined) this.#byClient.set(client, this.runningFor(client) + 1);
    if (here) this.#total++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        if (here) this.#total--;
        if (client === undefined) return;
        const left = this.runningFor(client) - 1;
        if (left > 0) this.#byClient.set(client, left);
        else this.#byClient.delete(client);
      },
    };
  }
}

/**
 * `answer` with its slot given back when its body has been read to its end, failed, or been cancelled (the
 * client went away): a forwarded read runs for as long as its answer streams.
 */
export function releasedWithBody(answer: Response, slot: FetchSlot): Response {
  if (!answer.body) {
    slot.release();
    return answer;
  }
  const reader = answer.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          slot.release();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        slot.release();
        controller.error(err);
      }
    },
    async cancel(reason) {
      slot.release();
      await reader.cancel(reason);
    },
  });
  return new Response(body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
}
