/**
 * Reads EDF, EDF+ (C and D), BDF and BDF+ in bounded memory: data records are read in batches of about
 * 4 MiB (or, for records larger than 16 MiB, a record is read in slices, channel by channel), samples come
 * out in the file's own type (int16, or int32 for 24-bit BDF), and EDF+ annotations are collected on the way.
 */
import type { Annotation, ChannelInfo, RecordingReader, SampleArray, Segment, SourceFormat } from '../types.js';
import { CorruptOrTruncatedError, NotContinuousError } from '../conversion-errors.js';
import type { SourceTree } from '../source-tree.js';
import { FileSource, baseName } from './file-source.js';
import { parseEdfHeader, type EdfHeader, type EdfSignal } from './edf-header.js';
import { parseRecordTals } from './edf-tal.js';
import { decodeInt24 } from './int24.js';
import { addSeconds, snapRate } from './naive-time.js';
import { giveBack, lendBytes } from '../sample-buffers.js';

const batchBytes = 4 << 20;
const largeRecordBytes = 16 << 20;
/** Beyond this many annotations the rest are dropped (and flagged): a bound on memory for damaged files. */
const maxAnnotations = 1_000_000;
/**
 * The most contiguous stretches an EDF+D recording may have: each is an entry of the store's root `zarr.json`,
 * which every reader parses whole, and a file with a gap after every record would make it several times the
 * file's own size.
 */
export const MAX_SEGMENTS = 10_000;

export class EdfReader implements RecordingReader {
  readonly format: SourceFormat;
  readonly sampleType: 'int16' | 'int32';
  readonly channels: readonly ChannelInfo[];
  readonly startTime: string | null;
  readonly flags: string[];
  readonly files: readonly string[];
  readonly header: EdfHeader;
  readonly #source: FileSource;
  readonly #dataSignals: EdfSignal[];
  readonly #annotationSignals: EdfSignal[];
  /** Start of record 0 relative to the header's start time (EDF+ sub-second offset). */
  readonly #firstRecordStart: number;
  readonly #annotations: Annotation[] = [];
  readonly #segments: Segment[] = [];
  /** Per-channel output arrays of one batch, reused from batch to batch (RecordingReader.blocks allows it). */
  #outputs: (Int16Array | Int32Array)[] | undefined;
  /** Arrays lent by `sample-buffers.ts` (batches, outputs), given back by `close()`. */
  readonly #lent: Uint8Array[] = [];
  /** The batch read in flight, if any: `close()` waits for it before its buffer is given back. */
  #reading: Promise<unknown> | undefined;
  #consumed = false;

  private constructor(source: FileSource, header: EdfHeader, firstRecordStart: number) {
    this.#source = source;
    this.header = header;
    this.format = header.format;
    this.sampleType = header.bytesPerSample === 3 ? 'int32' : 'int16';
    this.files = [source.path];
    this.flags = [...header.flags];
    this.#dataSignals = header.signals.filter((s) => !s.isAnnotation && s.samplesPerRecord > 0);
    this.#annotationSignals = header.format.endsWith('+') ? header.signals.filter((s) => s.isAnnotation) : [];
    this.#firstRecordStart = firstRecordStart;
    this.startTime = header.startTime === null ? null : addSeconds(header.startTime, firstRecordStart);
    this.channels = this.#dataSignals.map((s) => toChannel(s, header));
  }

  /** Opens an EDF or BDF file inside `tree` (by default its own folder). */
  static async open(path: string, tree?: SourceTree): Promise<EdfReader> {
    const source = await FileSource.open(path, tree);
    try {
      const name = baseName(path);
      const fixed = await source.read(0, 256);
      if (source.size >= 256) {
        // Bound the header read by the file size before trusting the signal count.
        const ns = Number(new TextDecoder('latin1').decode(fixed.subarray(252, 256)).trim());
        const want = Number.isInteger(ns) && ns > 0 ? Math.min(256 * (ns + 1), source.size) : 256;
        const header = parseEdfHeader(want > 256 ? await source.read(0, want) : fixed, source.size, name);
        let firstRecordStart = 0;
        const annotation = header.format.endsWith('+') ? header.signals.find((s) => s.isAnnotation) : undefined;
        if (annotation) {
          // Only its timekeeping TAL is wanted: no more of the signal is read than #largeRecords reads of a record.
          const length = Math.min(annotation.samplesPerRecord * header.bytesPerSample, largeRecordBytes);
          firstRecordStart = parseRecordTals(await source.read(header.headerBytes + annotation.recordOffset, length), 0).recordStart ?? 0;
        }
        return new EdfReader(source, header, firstRecordStart);
      }
      parseEdfHeader(fixed, source.size, name);
      throw new CorruptOrTruncatedError(`${name} is too short to be an EDF file.`);
    } catch (err) {
      await source.close();
      throw err;
    }
  }

  async *blocks(): AsyncGenerator<SampleArray[]> {
    if (this.#consumed) throw new Error('EdfReader.blocks() can be iterated once');
    this.#consumed = true;
    const { recordBytes, recordCount } = this.header;
    if (recordBytes <= largeRecordBytes) {
      const perBatch = Math.max(1, Math.floor(batchBytes / recordBytes));
      // Two buffers: the next batch is read while this one is decoded and written.
      const buffers = [0, 1].map(() => this.#lend(Math.min(perBatch, recordCount) * recordBytes));
      const readBatch = (r0: number, buffer: Uint8Array) => {
        const read = this.#source.read(this.header.headerBytes + r0 * recordBytes, Math.min(perBatch, recordCount - r0) * recordBytes, buffer);
        // Observed here so that a read whose batch is never consumed cannot become an unhandled rejection.
        this.#reading = read.catch(() => undefined);
        return read;
      };
      let next: Promise<Uint8Array> | undefined = readBatch(0, buffers[0]!);
      for (let r0 = 0, b = 0; r0 < recordCount; r0 += perBatch, b ^= 1) {
        const n = Math.min(perBatch, recordCount - r0);
        const bytes = await next!;
        next = r0 + perBatch < recordCount ? readBatch(r0 + perBatch, buffers[b ^ 1]!) : undefined;
        if (bytes.length < n * recordBytes) throw this.#truncated();
        for (let k = 0; k < n; k++) this.#annotate(r0 + k, bytes.subarray(k * recordBytes, (k + 1) * recordBytes));
        yield this.#decodeRecords(bytes, n, Math.min(perBatch, recordCount));
      }
    } else {
      yield* this.#largeRecords();
    }
    this.#closeSegments(recordCount);
  }

  annotations(): Annotation[] {
    return this.#annotations;
  }

  segments(): Segment[] {
    return this.#segments;
  }

  async digests(): Promise<string[]> {
    return [await this.#source.sha256()];
  }

  async close(): Promise<void> {
    await this.#reading;
    await this.#source.close();
    for (const array of this.#lent.splice(0)) giveBack(array);
    this.#outputs = undefined;
  }

  #lend(bytes: number): Uint8Array {
    const array = lendBytes(bytes);
    this.#lent.push(array);
    return array;
  }

  /** One lent array for every channel's output of a batch, cut into a view per channel. */
  #makeOutputs(perBatch: number): (Int16Array | Int32Array)[] {
    const size = this.header.bytesPerSample === 2 ? 2 : 4;
    const whole = this.#lend(this.#dataSignals.reduce((sum, s) => sum + s.samplesPerRecord * perBatch * size, 0));
    let at = whole.byteOffset;
    return this.#dataSignals.map((signal) => {
      const length = signal.samplesPerRecord * perBatch;
      const view = size === 2 ? new Int16Array(whole.buffer, at, length) : new Int32Array(whole.buffer, at, length);
      at += length * size;
      return view;
    });
  }

  #decodeRecords(bytes: Uint8Array, n: number, perBatch: number): SampleArray[] {
    const { recordBytes } = this.header;
    const outputs = (this.#outputs ??= this.#makeOutputs(perBatch));
    return this.#dataSignals.map((signal, c) => {
      const nr = signal.samplesPerRecord;
      const output = outputs[c]!;
      if (output instanceof Int16Array) {
        const out = output.subarray(0, nr * n);
        const view = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length >> 1);
        for (let k = 0; k < n; k++) {
          const from = (k * recordBytes + signal.recordOffset) >> 1;
          out.set(view.subarray(from, from + nr), k * nr);
        }
        return out;
      }
      const out = output.subarray(0, nr * n);
      for (let k = 0; k < n; k++) decodeInt24(bytes, k * recordBytes + signal.recordOffset, nr, out, k * nr);
      return out;
    });
  }

  /** Records too large for memory: each is read in slices, each channel's slice with one positioned read. */
  async *#largeRecords(): AsyncGenerator<SampleArray[]> {
    const { recordBytes, recordCount, headerBytes, bytesPerSample } = this.header;
    const parts = Math.ceil(recordBytes / batchBytes);
    for (let r = 0; r < recordCount; r++) {
      const base = headerBytes + r * recordBytes;
      for (const signal of this.#annotationSignals) {
        const length = signal.samplesPerRecord * bytesPerSample;
        this.#annotate(r, undefined, await this.#source.read(base + signal.recordOffset, Math.min(length, largeRecordBytes)));
      }
      for (let p = 0; p < parts; p++) {
        const block: SampleArray[] = [];
        for (const signal of this.#dataSignals) {
          const nr = signal.samplesPerRecord;
          const from = Math.floor((p * nr) / parts);
          const to = Math.floor(((p + 1) * nr) / parts);
          const bytes = await this.#source.read(base + signal.recordOffset + from * bytesPerSample, (to - from) * bytesPerSample);
          if (bytes.length < (to - from) * bytesPerSample) throw this.#truncated();
          if (bytesPerSample === 2) {
            block.push(new Int16Array(bytes.buffer, bytes.byteOffset, to - from));
          } else {
            const out = new Int32Array(to - from);
            decodeInt24(bytes, 0, to - from, out, 0);
            block.push(out);
          }
        }
        yield block;
      }
    }
  }

  #annotate(record: number, recordBytes: Uint8Array | undefined, annotationBytes?: Uint8Array): void {
    if (this.#annotationSignals.length === 0) {
      if (record === 0) this.#segments.push({ storedStart: 0, onset: 0, duration: 0 });
      return;
    }
    const { bytesPerSample, recordDuration } = this.header;
    let recordStart: number | undefined;
    for (const signal of this.#annotationSignals) {
      const bytes =
        annotationBytes ?? recordBytes!.subarray(signal.recordOffset, signal.recordOffset + signal.samplesPerRecord * bytesPerSample);
      const tals = parseRecordTals(bytes, maxAnnotations - this.#annotations.length);
      recordStart ??= tals.recordStart;
      for (const a of tals.annotations) this.#annotations.push({ ...a, onset: a.onset - this.#firstRecordStart });
      if (tals.capped && !this.flags.includes('annotations_capped')) this.flags.push('annotations_capped');
      if (annotationBytes) break;
    }
    const stored = record * recordDuration;
    const onset = this.header.discontinuous && recordStart !== undefined ? recordStart - this.#firstRecordStart : stored;
    const last = this.#segments.at(-1);
    if (!last || Math.abs(last.onset + (stored - last.storedStart) - onset) > 1e-6 * Math.max(1, recordDuration)) {
      if (this.#segments.length >= MAX_SEGMENTS) {
        throw new NotContinuousError(`${baseName(this.#source.path)} has more than ${MAX_SEGMENTS.toLocaleString('en')} contiguous stretches (records with gaps between them); nds serves EDF+D recordings of up to ${MAX_SEGMENTS.toLocaleString('en')}.`);
      }
      if (last) last.duration = stored - last.storedStart;
      this.#segments.push({ storedStart: stored, onset, duration: 0 });
    }
  }

  #closeSegments(recordCount: number): void {
    const last = this.#segments.at(-1);
    if (last) last.duration = recordCount * this.header.recordDuration - last.storedStart;
  }

  #truncated(): CorruptOrTruncatedError {
    return new CorruptOrTruncatedError(`${baseName(this.#source.path)} changed or ended while it was being read.`);
  }
}

function toChannel(signal: EdfSignal, header: EdfHeader): ChannelInfo {
  // EDF spec: gain = (pmax - pmin) / (dmax - dmin); offset = pmax - gain * dmax. physical = digital*gain + offset.
  const scale = (signal.physicalMax - signal.physicalMin) / (signal.digitalMax - signal.digitalMin);
  const offset = signal.physicalMax - scale * signal.digitalMax;
  const label = signal.label;
  return {
    label,
    type: /^(status|trigger|sti \d+)$/i.test(label) ? 'TRIG' : '',
    unit: signal.unit,
    rate: snapRate(signal.samplesPerRecord / header.recordDuration),
    nSamples: signal.samplesPerRecord * header.recordCount,
    scale,
    offset,
    digitalMin: signal.digitalMin,
    digitalMax: signal.digitalMax,
    physicalMin: signal.physicalMin,
    physicalMax: signal.physicalMax,
    prefilter: signal.prefilter,
    transducer: signal.transducer,
  };
}
