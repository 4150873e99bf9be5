/**
 * The part URLs of one upload in parts, asked for in batches (decision 0037): a part's URL is bound to its
 * checksum, known only once the part is read, and the reader runs a few parts ahead of the sends. When a send
 * needs its URL, one `part-urls` request asks for it and for every part read meanwhile whose URL is not yet
 * asked (up to the route's 100), so a file of 32 parts takes a handful of requests instead of 32. A URL is
 * handed out once: a part sent again asks afresh (its URL may have expired, or its answer been lost).
 */

/** A part's checksum as the server asks for it (`part_checksum`). */
export type PartChecksumField = { sha256: string } | { crc32: string };

export interface PartTarget {
  part_number: number;
  url: string;
  headers: Record<string, string>;
}

/** Asks the server for the URLs of these parts (one `part-urls` request). */
export type FetchPartUrls = (parts: Array<{ part_number: number } & PartChecksumField>) => Promise<PartTarget[]>;

/** Parts a `part-urls` request may name (the route's limit). */
export const MAX_PARTS_PER_REQUEST = 100;

export class PartUrlBatches {
  readonly #fetch: FetchPartUrls;
  /** Parts read whose URL is not asked yet, in the order they were read. */
  readonly #unasked = new Map<number, PartChecksumField>();
  /** URLs asked (or come) and not handed out yet. */
  readonly #asked = new Map<number, Promise<PartTarget>>();
  readonly #checksums = new Map<number, PartChecksumField>();

  constructor(fetch: FetchPartUrls) {
    this.#fetch = fetch;
  }

  /** Part `n` is read and its checksum known: its URL may come with the next request. */
  known(n: number, checksum: PartChecksumField): void {
    this.#checksums.set(n, checksum);
    if (!this.#asked.has(n)) this.#unasked.set(n, checksum);
  }

  /** Part `n`'s checksum, as `known` was told it. */
  checksumOf(n: number): PartChecksumField {
    const checksum = this.#checksums.get(n);
    if (!checksum) throw new Error(`part ${n}'s checksum is not known yet`);
    return checksum;
  }

  /** Part `n`'s URL (its checksum must be `known`): from a request made already, or one asked now with others. */
  async urlFor(n: number): Promise<PartTarget> {
    if (!this.#asked.has(n)) this.#ask(n);
    const target = this.#asked.get(n)!;
    this.#asked.delete(n);
    return target;
  }

  #ask(n: number): void {
    const checksum = this.checksumOf(n);
    this.#unasked.delete(n);
    const batch = [{ part_number: n, ...checksum }];
    for (const [m, sum] of this.#unasked) {
      if (batch.length === MAX_PARTS_PER_REQUEST) break;
      batch.push({ part_number: m, ...sum });
      this.#unasked.delete(m);
    }
    const answer = this.#fetch(batch);
    const targets = new Map<number, Promise<PartTarget>>();
    for (const { part_number: m } of batch) {
      const target = answer.then((found) => found.find((t) => t.part_number === m) ?? Promise.reject(new Error(`the server sent no URL for part ${m}`)));
      targets.set(m, target);
      this.#asked.set(m, target);
    }
    // A failed request is told to the part that made it (which is sent again); the other parts it named, not
    // yet handed their URL, go back to be asked for with the next request.
    answer.catch(() => {
      for (const [m, target] of targets) {
        if (m === n || this.#asked.get(m) !== target) continue;
        this.#asked.delete(m);
        if (!this.#unasked.has(m)) this.#unasked.set(m, this.#checksums.get(m)!);
      }
    });
    for (const [m, target] of targets) if (m !== n) target.catch(() => undefined);
  }
}
