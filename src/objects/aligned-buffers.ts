/**
 * Page-aligned buffers for direct I/O. `O_DIRECT` wants the memory address aligned to the device's block, not
 * only the file offset and the length; an ordinary ArrayBuffer comes from malloc and is aligned to 16 bytes at
 * best, while a WebAssembly memory starts on a page boundary. So buffers are cut from WebAssembly memories, a
 * slab of several at a time (each memory reserves address space of its own).
 */
export const PAGE = 4096;

export class AlignedBufferPool {
  readonly #bytes: number;
  readonly #perSlab: number;
  readonly #maxBuffers: number;
  readonly #free: Uint8Array[] = [];
  #made = 0;

  /**
   * `bytes`: the size of every buffer, a multiple of 64 KiB (WebAssembly's page). At most `maxBuffers` are
   * ever made; they are kept for reuse, so the pool's memory is bounded by that number.
   */
  constructor(bytes: number, { perSlab = 8, maxBuffers = 64 } = {}) {
    if (bytes % 65536 !== 0) throw new RangeError('aligned buffers are whole WebAssembly pages (64 KiB)');
    this.#bytes = bytes;
    this.#perSlab = perSlab;
    this.#maxBuffers = maxBuffers;
  }

  /** `count` free buffers, or undefined when fewer are left of `maxBuffers` (the caller falls back to ordinary ones). */
  take(count: number): Uint8Array[] | undefined {
    while (this.#free.length < count && this.#made < this.#maxBuffers) this.#slab();
    if (this.#free.length < count) return undefined;
    return this.#free.splice(this.#free.length - count, count);
  }

  give(buffers: Uint8Array[]): void {
    this.#free.push(...buffers);
  }

  #slab(): void {
    const count = Math.min(this.#perSlab, this.#maxBuffers - this.#made);
    const pages = (this.#bytes / 65536) * count;
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    for (let i = 0; i < count; i++) this.#free.push(new Uint8Array(memory.buffer, i * this.#bytes, this.#bytes));
    this.#made += count;
  }
}
