/**
 * Writes one channel group (one modality and native rate): level 0 chunk by chunk, [≤64 channels,
 * chunk_samples] in the source's digital type, and feeds the view pyramid on the way. Memory holds one
 * chunk per 64-channel row block plus one chunk per view level.
 */
import type { SampleArray, SampleType } from '../types.js';
import { CorruptOrTruncatedError } from '../conversion-errors.js';
import { giveBack, lendSamples } from '../sample-buffers.js';
import type { ChunkCodec } from './chunk-codec.js';
import type { StoreSink } from './store-sink.js';
import { EnvelopeLevel, viewLevelCount, type EnvelopeInput } from './envelope-level.js';

export const maxChunkChannels = 64;

interface RowBlock {
  channelStart: number;
  rows: number;
  buffer: SampleArray;
}

export interface GroupWriterInit {
  name: string;
  /** Indices of this group's channels in the reader's channel list. */
  channelIndices: number[];
  nSamples: number;
  chunkSamples: number;
  type: SampleType;
  sink: StoreSink;
  codec: ChunkCodec;
}

export class GroupWriter {
  readonly name: string;
  readonly channelIndices: readonly number[];
  readonly nSamples: number;
  readonly chunkSamples: number;
  readonly nViewLevels: number;
  readonly #blocks: RowBlock[] = [];
  readonly #pyramid: EnvelopeLevel | undefined;
  readonly #sink: StoreSink;
  readonly #codec: ChunkCodec;
  #filled = 0;
  #chunkIndex = 0;
  #written = 0;

  constructor(init: GroupWriterInit) {
    this.name = init.name;
    this.channelIndices = init.channelIndices;
    this.nSamples = init.nSamples;
    this.chunkSamples = init.chunkSamples;
    this.#sink = init.sink;
    this.#codec = init.codec;
    const n = init.channelIndices.length;
    for (let start = 0; start < n; start += maxChunkChannels) {
      const rows = Math.min(maxChunkChannels, n - start);
      this.#blocks.push({ channelStart: start, rows, buffer: lendSamples(init.type, rows * init.chunkSamples) });
    }
    this.nViewLevels = viewLevelCount(init.nSamples);
    let level: EnvelopeLevel | undefined;
    for (let l = this.nViewLevels; l >= 1; l--) {
      level = new EnvelopeLevel(l, n, init.type, level, (lv, index, chunk) => this.#put(`view/${lv}/c/0/0/${index}`, chunk));
    }
    this.#pyramid = level;
  }

  /** Takes the next samples of this group's channels (all arrays of one length). */
  async push(block: readonly SampleArray[]): Promise<void> {
    const length = block[this.channelIndices[0]!]!.length;
    if (this.#written + length > this.nSamples) throw new CorruptOrTruncatedError(`The ${this.name} channels hold more samples than the header announced.`);
    let offset = 0;
    while (offset < length) {
      const take = Math.min(length - offset, this.chunkSamples - this.#filled);
      for (const rb of this.#blocks) {
        for (let r = 0; r < rb.rows; r++) {
          const source = block[this.channelIndices[rb.channelStart + r]!]!;
          if (source.length !== length) throw new CorruptOrTruncatedError(`The ${this.name} channels delivered unequal sample counts.`);
          rb.buffer.set(source.subarray(offset, offset + take) as never, r * this.chunkSamples + this.#filled);
        }
      }
      this.#filled += take;
      offset += take;
      this.#written += take;
      if (this.#filled === this.chunkSamples) await this.#flushLevel0();
    }
  }

  async finish(): Promise<void> {
    if (this.#written !== this.nSamples) {
      throw new CorruptOrTruncatedError(`The ${this.name} channels hold ${this.#written} samples, not the ${this.nSamples} the header announced.`);
    }
    if (this.#filled > 0) {
      // Zarr v3 stores edge chunks whole: pad with the fill value, not with the previous chunk's samples.
      for (const rb of this.#blocks) {
        for (let r = 0; r < rb.rows; r++) rb.buffer.fill(0, r * this.chunkSamples + this.#filled, (r + 1) * this.chunkSamples);
      }
      await this.#flushLevel0();
    }
    await this.#pyramid?.finish();
  }

  /** Gives back the buffers this writer borrowed; it cannot be used afterwards. */
  release(): void {
    for (const rb of this.#blocks) giveBack(rb.buffer);
    this.#blocks.length = 0;
    this.#pyramid?.release();
  }

  async #flushLevel0(): Promise<void> {
    const inputs: EnvelopeInput[] = [];
    for (let b = 0; b < this.#blocks.length; b++) {
      const rb = this.#blocks[b]!;
      await this.#put(`0/c/${b}/${this.#chunkIndex}`, rb.buffer);
      inputs.push({ channelStart: rb.channelStart, rows: rb.rows, min: rb.buffer, max: rb.buffer, stride: this.chunkSamples, start: 0 });
    }
    await this.#pyramid?.push(inputs, this.#filled);
    this.#chunkIndex++;
    this.#filled = 0;
  }

  async #put(key: string, data: SampleArray): Promise<void> {
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    await this.#sink.put(`${this.name}/${key}`, await this.#codec.encode(bytes));
  }
}
