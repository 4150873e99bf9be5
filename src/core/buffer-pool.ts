/**
 * Output buffers lent out and handed back, so that compressing thousands of chunks does not allocate (and
 * page-fault in) a fresh buffer for each. Capacities are powers of two; a few buffers of each are kept.
 */
export class BufferPool {
  readonly #free = new Map<number, ArrayBuffer[]>();
  /** Buffers out on loan: a second `give` of the same buffer, or one of a buffer not from here, is ignored. */
  readonly #lent = new WeakSet<ArrayBuffer>();
  readonly #keep: number;

  /** `keep`: how many free buffers of each capacity are kept (more are left to the garbage collector). */
  constructor(keep = 12) {
    this.#keep = keep;
  }

  /** A buffer of at least `bytes` bytes, whole (its contents are whatever the last borrower left). */
  take(bytes: number): Uint8Array {
    const capacity = 2 ** Math.ceil(Math.log2(Math.max(bytes, 4096)));
    const buffer = this.#free.get(capacity)?.pop() ?? new ArrayBuffer(capacity);
    this.#lent.add(buffer);
    return new Uint8Array(buffer);
  }

  /** Hands back the buffer under `array` (any view of it); the caller must not use it afterwards. */
  give(array: ArrayBufferView): void {
    const buffer = array.buffer as ArrayBuffer;
    if (!this.#lent.delete(buffer)) return;
    let free = this.#free.get(buffer.byteLength);
    if (!free) this.#free.set(buffer.byteLength, (free = []));
    if (free.length < this.#keep) free.push(buffer);
  }
}
