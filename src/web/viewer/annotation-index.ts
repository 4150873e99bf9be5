/**
 * A recording's annotations in onset order, answering what a frame asks without walking the annotations in
 * view: which overlap the window (O(log n + blocks + k), for the spans drawn), how many do (O(log n): one
 * count of onsets before its end less one of ends before its start), and which pixel columns of a row they
 * cover (the density, O(columns) per row: the same two counts per column, over the sorted onsets and ends of
 * that channel's annotations). Changed in place: an edit or a poll's changes move a few entries of sorted
 * arrays (O(n) memory moves, no sort); a load, or a batch of changes over a tenth of them, builds it again.
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

const byOnset = (a: ViewerAnnotation, b: ViewerAnnotation) => a.onset - b.onset || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const endOf = (a: ViewerAnnotation) => a.onset + a.duration;

/** The track of an annotation for all channels (a channel label is never the empty string). */
export const ALL_CHANNELS = '';

/** The tracks an annotation is on: each of its channels once, or the track of all channels. */
function tracksOf(a: ViewerAnnotation): string[] {
  return a.channels === null ? [ALL_CHANNELS] : [...new Set(a.channels)];
}

/** A growable sorted array of numbers: insert and remove by value, count those below a bound. */
export class SortedNumbers {
  #values: Float64Array;
  #length: number;

  constructor(sorted: Float64Array = new Float64Array(8), length = 0) {
    this.#values = sorted;
    this.#length = length;
  }

  get length(): number {
    return this.#length;
  }

  /** The array itself (valid up to `length`), for sweeps. */
  get values(): Float64Array {
    return this.#values;
  }

  /** How many are below `bound`. */
  below(bound: number): number {
    return lowerBound(this.#values, 0, this.#length, bound);
  }

  insert(value: number): void {
    if (this.#length === this.#values.length) {
      const grown = new Float64Array(Math.max(8, this.#values.length * 2));
      grown.set(this.#values.subarray(0, this.#length));
      this.#values = grown;
    }
    const at = lowerBound(this.#values, 0, this.#length, value);
    this.#values.copyWithin(at + 1, at, this.#length);
    this.#values[at] = value;
    this.#length++;
  }

  /** Removes one entry equal to `value`; false when there is none. */
  remove(value: number): boolean {
    const at = lowerBound(this.#values, 0, this.#length, value);
    if (at >= this.#length || this.#values[at] !== value) return false;
    this.#values.copyWithin(at, at + 1, this.#length);
    this.#length--;
    return true;
  }
}

/** A channel's (or all channels') annotations as two sorted arrays: their onsets and their ends. */
interface Track {
  onsets: SortedNumbers;
  ends: SortedNumbers;
}

export class AnnotationIndex {
  #items: ViewerAnnotation[] = [];
  #byId = new Map<string, ViewerAnnotation>();
  /** `#reach[i]`: the latest end among items 0..i (never decreases: binary search finds the first that reaches a time). */
  #reach = new Float64Array(0);
  /** The latest end within each block of `BLOCK` items. */
  #blockEnd = new Float64Array(0);
  /** Every annotation's end, sorted (with the items' onsets: how many overlap a window, in O(log n)). */
  #ends = new SortedNumbers();
  #tracks = new Map<string, Track>();
  #version = 0;

  constructor(annotations: Iterable<ViewerAnnotation> = []) {
    this.replace(annotations);
  }

  get size(): number {
    return this.#items.length;
  }

  /** Moves on at every change (what a frame's cache compares). */
  get version(): number {
    return this.#version;
  }

  /** All annotations, by onset then id. */
  get all(): readonly ViewerAnnotation[] {
    return this.#items;
  }

  get(id: string): ViewerAnnotation | undefined {
    return this.#byId.get(id);
  }

  /** Every id once (a repeated id keeps its last), sorted, and the per-track arrays built from them. */
  replace(annotations: Iterable<ViewerAnnotation>): void {
    this.#byId = new Map();
    for (const a of annotations) this.#byId.set(a.id, a);
    this.#items = [...this.#byId.values()].sort(byOnset);
    const n = this.#items.length;
    const ends = new Float64Array(Math.max(8, n));
    const perTrack = new Map<string, { onsets: number[]; ends: number[] }>();
    for (let i = 0; i < n; i++) {
      const a = this.#items[i]!;
      ends[i] = endOf(a);
      for (const t of tracksOf(a)) {
        let found = perTrack.get(t);
        if (!found) perTrack.set(t, (found = { onsets: [], ends: [] }));
        // Items go by onset: each track's onsets come sorted.
        found.onsets.push(a.onset);
        found.ends.push(ends[i]!);
      }
    }
    ends.subarray(0, n).sort();
    this.#ends = new SortedNumbers(ends, n);
    this.#tracks = new Map();
    for (const [t, lists] of perTrack) {
      this.#tracks.set(t, { onsets: new SortedNumbers(Float64Array.from(lists.onsets), lists.onsets.length), ends: new SortedNumbers(Float64Array.from(lists.ends).sort(), lists.ends.length) });
    }
    this.#reindex();
  }

  /**
   * Adds or replaces (`put`, by id) and deletes (`remove`, ids) annotations in place: each moves its entries
   * in the sorted arrays; past a tenth of the annotations at once, they are built again.
   */
  update(put: readonly ViewerAnnotation[], remove: readonly string[] = []): void {
    if (put.length + remove.length > Math.max(64, this.#items.length / 10)) {
      const next = new Map(this.#byId);
      for (const id of remove) next.delete(id);
      for (const a of put) next.set(a.id, a);
      this.replace(next.values());
      return;
    }
    for (const id of remove) this.#take(id);
    for (const a of put) {
      this.#take(a.id);
      this.#add(a);
    }
    this.#reindex();
  }

  #take(id: string): void {
    const old = this.#byId.get(id);
    if (!old) return;
    this.#byId.delete(id);
    const at = this.#position(old);
    const found = this.#items[at]?.id === id ? at : this.#items.findIndex((a) => a.id === id);
    if (found >= 0) this.#items.splice(found, 1);
    const end = endOf(old);
    this.#ends.remove(end);
    for (const t of tracksOf(old)) {
      const track = this.#tracks.get(t);
      if (!track) continue;
      track.onsets.remove(old.onset);
      track.ends.remove(end);
      if (track.onsets.length === 0) this.#tracks.delete(t);
    }
  }

  #add(a: ViewerAnnotation): void {
    this.#byId.set(a.id, a);
    this.#items.splice(this.#position(a), 0, a);
    const end = endOf(a);
    this.#ends.insert(end);
    for (const t of tracksOf(a)) {
      let track = this.#tracks.get(t);
      if (!track) this.#tracks.set(t, (track = { onsets: new SortedNumbers(), ends: new SortedNumbers() }));
      track.onsets.insert(a.onset);
      track.ends.insert(end);
    }
  }

  /** Where `a` is, or goes, in the items' order. */
  #position(a: ViewerAnnotation): number {
    const items = this.#items;
    return firstIndex(items.length, (i) => byOnset(items[i]!, a) >= 0);
  }

  /** The reach and the blocks' ends, again from the items (a pass of n: well under a millisecond at 100,000). */
  #reindex(): void {
    const n = this.#items.length;
    if (this.#reach.length < n || this.#reach.length > 4 * n + 64) this.#reach = new Float64Array(n + (n >> 3) + 8);
    const blocks = Math.ceil(n / BLOCK);
    if (this.#blockEnd.length < blocks || this.#blockEnd.length > 4 * blocks + 8) this.#blockEnd = new Float64Array(blocks + (blocks >> 3) + 2);
    this.#blockEnd.fill(-Infinity);
    let reach = -Infinity;
    for (let i = 0; i < n; i++) {
      const end = endOf(this.#items[i]!);
      if (end > reach) reach = end;
      this.#reach[i] = reach;
      const b = (i / BLOCK) | 0;
      if (end > this.#blockEnd[b]!) this.#blockEnd[b] = end;
    }
    this.#version++;
  }

  /**
   * The annotations with a part in [from, to) seconds — onset before `to`, end at or after `from` — by onset;
   * at most `limit` of them (`count` says how many there are in all).
   */
  overlapping(from: number, to: number, limit = Infinity): ViewerAnnotation[] {
    const out: ViewerAnnotation[] = [];
    if (limit <= 0) return out;
    this.#scan(from, to, (a) => out.push(a) < limit);
    return out;
  }

  /** How many annotations have a part in [from, to): those with an onset before `to` less those ending before `from`. */
  count(from: number, to: number): number {
    if (!(to > from)) return 0;
    const items = this.#items;
    const started = firstIndex(items.length, (i) => items[i]!.onset >= to);
    return Math.max(0, started - this.#ends.below(from));
  }

  /** The tracks with annotations: channel labels, and `ALL_CHANNELS` for those of all channels. */
  tracks(): string[] {
    return [...this.#tracks.keys()];
  }

  /**
   * Which of `width` pixel columns the annotations of `track` cover, into `out` from `offset` (1 covered, 0 not): column `c`
   * holds the times that round to it, [start + (c − ½)·step, start + (c + ½)·step) (the first from `start`:
   * the window's), and is covered when an
   * annotation has a part there (onset before its end, end at or after its start) — two counts per column,
   * each pointer moving on from the column before (by doubling steps: a column costs O(1 + log of the
   * entries it passes)), so a row costs O(width), whatever the number of annotations. Returns how many are covered.
   */
  coverage(track: string, start: number, step: number, width: number, out: Uint8Array, offset = 0): number {
    out.fill(0, offset, offset + width);
    const found = this.#tracks.get(track);
    if (!found || width <= 0) return 0;
    const onsets = found.onsets.values;
    const nOnsets = found.onsets.length;
    const ends = found.ends.values;
    const nEnds = found.ends.length;
    let begun = gallop(onsets, 0, nOnsets, start);
    let ended = gallop(ends, 0, nEnds, start);
    let covered = 0;
    for (let c = 0; c < width; c++) {
      // The first column starts at the window's start: an annotation ending just before it is not in the window.
      const from = c === 0 ? start : start + (c - 0.5) * step;
      const to = start + (c + 0.5) * step;
      // Nothing starts before this column ends and every one begun has ended: jump to the next onset's column.
      if (begun === ended && begun < nOnsets && onsets[begun]! >= to) {
        const next = Math.floor((onsets[begun]! - start) / step + 0.5);
        if (next >= width) break;
        // To the column before it, which the loop checks again: a time on a column's edge may round either way.
        if (next > c + 1) c = next - 2;
        continue;
      }
      // Most columns move each pointer by none or one: the test inline, the search only when it moves.
      if (begun < nOnsets && onsets[begun]! < to) begun = gallop(onsets, begun + 1, nOnsets, to);
      if (ended < nEnds && ends[ended]! < from) ended = gallop(ends, ended + 1, nEnds, from);
      if (begun > ended) {
        out[offset + c] = 1;
        covered++;
      }
    }
    return covered;
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

/** The first i in [lo, hi) with `values[i] >= bound` (values sorted); hi when none. */
function lowerBound(values: Float64Array, lo: number, hi: number, bound: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `lowerBound` from `from` on, by doubling steps: cheap when the answer is near `from`, as it is column to column. */
function gallop(values: Float64Array, from: number, n: number, bound: number): number {
  if (from >= n || values[from]! >= bound) return from;
  let step = 1;
  let lo = from;
  while (lo + step < n && values[lo + step]! < bound) {
    lo += step;
    step *= 2;
  }
  return lowerBound(values, lo + 1, Math.min(n, lo + step + 1), bound);
}
