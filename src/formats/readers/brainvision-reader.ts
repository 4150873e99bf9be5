/**
 * Reads BrainVision recordings (`.vhdr` + `.eeg` + `.vmrk`): INT_16, INT_32 and IEEE_FLOAT_32 samples,
 * multiplexed or vectorized, in blocks of about 4 MiB. physical = stored * resolution (offset 0).
 */
import type { Annotation, ChannelInfo, RecordingReader, SampleArray, Segment } from '../types.js';
import { CorruptOrTruncatedError, EmptyRecordingError, FileReadError } from '../conversion-errors.js';
import { SourceTree } from '../source-tree.js';
import { FileSource, baseName } from './file-source.js';
import { parseBrainVisionHeader, type BinaryFormat, type BrainVisionHeader } from './brainvision-header.js';
import { markerDateToIso, parseBrainVisionMarkers } from './brainvision-markers.js';
import { findCompanion } from './companion-file.js';
import { bytesPerSample, deinterleave, typedView, type BinaryType } from './interleaved.js';

const batchBytes = 4 << 20;
/** A header or marker file larger than this is not a BrainVision text file. */
const maxTextBytes = 64 << 20;

const types: Record<BinaryFormat, BinaryType> = { INT_16: 'int16', INT_32: 'int32', IEEE_FLOAT_32: 'float32' };

export class BrainVisionReader implements RecordingReader {
  readonly format = 'brainvision' as const;
  readonly sampleType: BinaryType;
  readonly channels: readonly ChannelInfo[];
  readonly startTime: string | null;
  readonly flags: string[];
  readonly files: readonly string[];
  readonly header: BrainVisionHeader;
  readonly nSamples: number;
  readonly #data: FileSource;
  readonly #annotations: Annotation[];
  /** Digests of the text files (read whole at open), by position in `files`; the data file's comes from `#data`. */
  readonly #textDigests: ReadonlyMap<number, string>;
  #consumed = false;

  private constructor(
    header: BrainVisionHeader,
    data: FileSource,
    nSamples: number,
    files: string[],
    textDigests: ReadonlyMap<number, string>,
    annotations: Annotation[],
    startTime: string | null,
    flags: string[],
  ) {
    this.header = header;
    this.#data = data;
    this.nSamples = nSamples;
    this.files = files;
    this.#textDigests = textDigests;
    this.#annotations = annotations;
    this.startTime = startTime;
    this.flags = flags;
    this.sampleType = types[header.binaryFormat];
    this.channels = header.channels.map((c) => ({
      label: c.label,
      type: '',
      unit: c.unit,
      rate: header.rate,
      nSamples,
      scale: c.resolution,
      offset: 0,
      ...(c.reference ? { reference: c.reference } : {}),
    }));
  }

  /** Opens a `.vhdr` and its `.eeg` and `.vmrk`, all inside `tree` (by default the header's folder). */
  static async open(path: string, within?: SourceTree): Promise<BrainVisionReader> {
    const tree = within ?? (await SourceTree.around(path));
    const name = baseName(path);
    const headerText = await readText(path, tree);
    const header = parseBrainVisionHeader(headerText.bytes, name);
    const flags = [...header.flags];
    const dataFile = await findCompanion(path, header.dataFile, '.eeg', tree);
    if (!dataFile) throw new FileReadError(`The data file ${header.dataFile} named by ${name} does not exist.`);
    if (dataFile.recovered) flags.push('brainvision_header_recovered');
    const files = [path, dataFile.path];
    const textDigests = new Map([[0, headerText.sha256]]);

    const markerFile = await findCompanion(path, header.markerFile, '.vmrk', tree);
    let annotations: Annotation[] = [];
    let startTime: string | null = null;
    if (markerFile) {
      files.push(markerFile.path);
      if (markerFile.recovered && !flags.includes('brainvision_header_recovered')) flags.push('brainvision_header_recovered');
      const markerText = await readText(markerFile.path, tree);
      textDigests.set(2, markerText.sha256);
      const markers = parseBrainVisionMarkers(markerText.bytes);
      const first = markers.find((m) => m.type.toLowerCase() === 'new segment');
      startTime = markerDateToIso(first?.date);
      annotations = markers
        .filter((m) => m !== first)
        .map((m) => ({
          onset: m.sample / header.rate,
          duration: m.size > 1 ? m.size / header.rate : 0,
          description: m.description ? `${m.type}/${m.description}` : m.type,
        }));
      if (markers.some((m) => m !== first && m.type.toLowerCase() === 'new segment')) flags.push('new_segment_markers');
    } else if (header.markerFile) {
      flags.push('marker_file_missing');
    }

    const data = await FileSource.open(dataFile.path, tree);
    try {
      const frame = header.channels.length * bytesPerSample(types[header.binaryFormat]);
      const dataName = baseName(dataFile.path);
      if (data.size === 0) throw new EmptyRecordingError(`The data file ${dataName} is empty (0 bytes).`);
      const available = Math.floor(data.size / frame);
      let nSamples = header.dataPoints ?? available;
      if (header.dataPoints !== undefined && header.dataPoints > available) {
        throw new CorruptOrTruncatedError(
          `${dataName} is truncated: the header announces ${header.dataPoints} samples of ${header.channels.length} channels, but the file holds ${available}.`,
        );
      }
      if (header.dataPoints === undefined && data.size % frame !== 0) {
        if (header.vectorized) {
          throw new CorruptOrTruncatedError(
            `${dataName} is ${data.size} bytes, not a whole number of samples for ${header.channels.length} channels of ${frame / header.channels.length} bytes.`,
          );
        }
        flags.push('truncated_last_sample');
      }
      if (header.vectorized && header.dataPoints !== undefined && data.size !== header.dataPoints * frame) {
        throw new CorruptOrTruncatedError(`${dataName} is ${data.size} bytes, but ${header.dataPoints} vectorized samples of ${header.channels.length} channels need ${header.dataPoints * frame}.`);
      }
      if (nSamples === 0) throw new EmptyRecordingError(`${dataName} holds no complete sample.`);
      nSamples = Math.min(nSamples, available);
      return new BrainVisionReader(header, data, nSamples, files, textDigests, annotations, startTime, flags);
    } catch (err) {
      await data.close();
      throw err;
    }
  }

  async *blocks(): AsyncGenerator<SampleArray[]> {
    if (this.#consumed) throw new Error('BrainVisionReader.blocks() can be iterated once');
    this.#consumed = true;
    const nChannels = this.channels.length;
    const size = bytesPerSample(this.sampleType);
    const perBlock = Math.max(1, Math.floor(batchBytes / (nChannels * size)));
    for (let s = 0; s < this.nSamples; s += perBlock) {
      const n = Math.min(perBlock, this.nSamples - s);
      if (!this.header.vectorized) {
        const bytes = await this.#data.read(s * nChannels * size, n * nChannels * size);
        if (bytes.length < n * nChannels * size) throw this.#truncated();
        yield deinterleave(typedView(this.sampleType, bytes, this.header.bigEndian), nChannels, n, this.sampleType);
      } else {
        const block: SampleArray[] = [];
        for (let c = 0; c < nChannels; c++) {
          const bytes = await this.#data.read((c * this.nSamples + s) * size, n * size);
          if (bytes.length < n * size) throw this.#truncated();
          block.push(typedView(this.sampleType, bytes, this.header.bigEndian));
        }
        yield block;
      }
    }
  }

  annotations(): Annotation[] {
    return this.#annotations;
  }

  segments(): Segment[] {
    return [{ storedStart: 0, onset: 0, duration: this.nSamples / this.header.rate }];
  }

  async digests(): Promise<string[]> {
    const data = await this.#data.sha256();
    return this.files.map((_, i) => this.#textDigests.get(i) ?? data);
  }

  async close(): Promise<void> {
    await this.#data.close();
  }

  #truncated(): CorruptOrTruncatedError {
    return new CorruptOrTruncatedError(`${baseName(this.#data.path)} changed or ended while it was being read.`);
  }
}

async function readText(path: string, tree: SourceTree): Promise<{ bytes: Uint8Array; sha256: string }> {
  const source = await FileSource.open(path, tree);
  try {
    if (source.size > maxTextBytes) throw new CorruptOrTruncatedError(`${baseName(path)} is ${source.size} bytes, too large for a BrainVision text file.`);
    const bytes = await source.read(0, source.size);
    return { bytes, sha256: await source.sha256() };
  } finally {
    await source.close();
  }
}
