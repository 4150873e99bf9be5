/**
 * Decoded level-0 chunks kept between requests, least recently used first and bounded by their bytes:
 * neighbouring and overlapping windows share chunks. A key carries its store's entity tag, so a rewritten
 * store's chunks are read anew. Concurrent readers of one chunk share one read; a failed read is not kept.
 * One a process, made by `lifecycle.ts`.
 */

/** A chunk's digital values, in the store's data type. */
export type DigitalArray = Int16Array | Int32Array | Float32Array | Float64Array;

/** Most bytes of decoded chunks kept. */
export const DECODED_CHUNK_BYTES = 16 * 1024 * 1024;

interface Slot {
  chunk: Promise<DigitalArray>;
  /** Set once decoded; a slot without it is still being read and is never dropped for room. */
  bytes?: number;
}

export class DecodedChunks {
  readonly #maxBytes: number;
  readonly #slots = new Map<string, Slot>();
  #bytes = 0;

  constructor(maxBytes = DECODED_CHUNK_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /**
   * The chunk kept under `key` (the store's entity tag and the chunk's object key), or the one `decode` reads,
   * kept for the next reader.
   */
  get(key: string, decode: () => Promise<DigitalArray>): Promise<DigitalArray> {
    const hit = this.#slots.get(key);
    if (hit) {
      this.#slots.delete(key);
      this.#slots.set(key, hit);
      return hit.chunk;
    }
    const slot: Slot = { chunk: decode() };
    this.#slots.set(key, slot);
    slot.chunk.then(
      (digital) => {
        if (this.#slots.get(key) !== slot) return;
        slot.bytes = digital.byteLength;
        this.#bytes += digital.byteLength;
        for (const [k, other] of this.#slots) {
          if (this.#bytes <= this.#maxBytes) break;
          if (other.bytes === undefined) continue;
          this.#slots.delete(k);
          this.#bytes -= other.bytes;
        }
      },
      () => this.#slots.get(key) === slot && this.#slots.delete(key),
    );
    return slot.chunk;
  }

  /** Bytes of the decoded chunks kept. */
  get bytes(): number {
    return this.#bytes;
  }
}
