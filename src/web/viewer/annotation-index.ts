/**
 * A recording's annotations in onset order, answering the one question a frame asks — which overlap the
 * window? — in O(log n + blocks + k): 100,000 annotations cost a frame what the few on screen cost. Immutable:
 * a change makes a new index (a sort, tens of milliseconds at 100,000; changes are rare, frames are not).
 */

/** One annotation as the API answers it (`GET /datasets/:id/annotations`). */
export interface ViewerAnnotation {
  id: string;
  /** Seconds from the recording's start. */
  onset: number;
  /** Seconds; 0 for an instant. */
  duration: number;
  /** Channel labels it applies to; null for all. */
  channels: string[] | null;
  label: string;
  hed: string | null;
  note: string | null;
  /** The author's username; null once the account is gone. */
  author: string | null;
  created_at: string;
  updated_at: string;
}

/** Annotations per block: the blocks' latest end lets a query skip 64 at a time past long-gone spans. */
const BLOCK = 64;

export class AnnotationIndex {
  readonly #items: ViewerAnnotation[];
  /** `#reach[i]`: the latest end among items 0..i (never decreases: binary search finds the first that reaches a time). */
  readonly #reach: Float64Array;
  /** The latest end within each block of `BLOCK` items. */
  readonly #blockEnd: Float64Array;

  constructor(annotations: Iterable<ViewerAnnotation>) {
    this.#items = [...annotations].sort((a, b) => a.onset - b.onset || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const n = this.#items.length;
    this.#reach = new Float64Array(n);
    this.#blockEnd = new Float64Array(Math.ceil(n / BLOCK)).fill(-Infinity);
    let reach = -Infinity;
    for (let i = 0; i < n; i++) {
      const a = this.#items[i]!;
      const end = a.onset + a.duration;
      reach = Math.max(reach, end);
      this.#reach[i] = reach;
      const b = (i / BLOCK) | 0;
      if (end > this.#blockEnd[b]!) this.#blockEnd[b] = end;
    }
  }

  get size(): number {
    return this.#items.length;
  }

  /** All annotations, by onset then id. */
  get all(): readonly ViewerAnnotation[] {
    return this.#items;
  }

  /**
   * The annotations with a part in [from, to) seconds — onset before `to`, end at or after `from` — by onset;
   * at most `limit` of them (`count` says how many there are in all).
   */
  overlapping(from: number, to: number, limit = Infinity): ViewerAnnotation[] {
    const out: ViewerAnnotation[] = [];
    this.#scan(from, to, (a) => out.push(a) < limit);
    return out;
  }

  /** How many annotations have a part in [from, to). */
  count(from: number, to: number): number {
    let n = 0;
    this.#scan(from, to, () => {
      n++;
      return true;
    });
    return n;
  }

  /** Calls `visit` with each annotation overlapping [from, to) by onset until it returns false. */
  #scan(from: number, to: number, visit: (a: ViewerAnnotation) => boolean): void {
    const items = this.#items;
    // Items before `lo` all end before `from`; items from `hi` on all start at or after `to`.
    const lo = firstIndex(items.length, (i) => this.#reach[i]! >= from);
    const hi = firstIndex(items.length, (i) => items[i]!.onset >= to);
    let i = lo;
    while (i < hi) {
      const b = (i / BLOCK) | 0;
      if (this.#blockEnd[b]! < from) {
        i = (b + 1) * BLOCK;
        continue;
      }
      const blockLast = Math.min(hi, (b + 1) * BLOCK);
      for (; i < blockLast; i++) {
        const a = items[i]!;
        if (a.onset + a.duration >= from && !visit(a)) return;
      }
    }
  }
}

/** The first i in [0, n) for which `holds` is true, `holds` being false then true along i; n when never. */
function firstIndex(n: number, holds: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (holds(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
