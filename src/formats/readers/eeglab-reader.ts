/**
 * Reads EEGLAB datasets: a `.set` MAT file (v5, or v7.3/HDF5) holding the `EEG` struct, with the samples
 * inline or in a `.fdt` file (raw little-endian float32, sample-major). Samples are physical values already
 * (scale 1, offset 0); they keep their stored type (float32, or float64 for double data).
 */
import type { Annotation, ChannelInfo, RecordingReader, SampleArray, Segment } from '../types.js';
import { isConversionError, ChannelCountMismatchError, CorruptOrTruncatedError, EmptyRecordingError, FileReadError, NotContinuousError } from '../conversion-errors.js';
import { SourceTree } from '../source-tree.js';
import { FileSource, baseName } from './file-source.js';
import { findCompanion } from './companion-file.js';
import { deinterleave, typedView } from './interleaved.js';
import { isMat5, parseMat5 } from './mat5-parser.js';
import { Mat73File } from './mat73-file.js';
import { matField, matNumber, matString, type MatNumericArray, type MatValue } from './mat-value.js';
import { snapRate } from './naive-time.js';
import { fileSha256 } from '../file-sha256.js';
import { checkChannelCount, checkSamplingRate } from '../recording-limits.js';

const batchBytes = 4 << 20;
/** A v5 `.set` is read whole; beyond this size the samples belong in a `.fdt` file. */
const maxSetBytes = 1 << 30;
/** The fields of `EEG` read here, for a v5 `.set` that holds them as variables of their own (no `EEG` struct). */
const eegFields = new Set(['nbchan', 'pnts', 'trials', 'srate', 'chanlocs', 'data', 'datfile', 'event']);
const hdf5Signature = [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a];

type DataSource =
  | { kind: 'inline'; array: MatNumericArray }
  | { kind: 'fdt'; source: FileSource }
  | { kind: 'hdf5'; file: Mat73File; dataset: Parameters<Mat73File['slice']>[0] };

interface EeglabParts {
  fields: Map<string, unknown>;
  mat73?: Mat73File;
  /** SHA-256 of the `.set`, when it was read whole (MAT v5); a v7.3 file is read by h5wasm and hashed apart. */
  sha256?: string;
}

export class EeglabReader implements RecordingReader {
  readonly format = 'eeglab' as const;
  readonly sampleType: 'float32' | 'float64';
  readonly channels: readonly ChannelInfo[];
  readonly startTime = null;
  readonly flags: string[];
  readonly files: readonly string[];
  readonly nSamples: number;
  readonly rate: number;
  readonly #data: DataSource;
  readonly #annotations: Annotation[];
  readonly #setSha256: string | undefined;
  readonly #tree: SourceTree;
  #consumed = false;

  private constructor(init: {
    channels: ChannelInfo[];
    sampleType: 'float32' | 'float64';
    flags: string[];
    files: string[];
    nSamples: number;
    rate: number;
    data: DataSource;
    annotations: Annotation[];
    setSha256: string | undefined;
    tree: SourceTree;
  }) {
    this.channels = init.channels;
    this.sampleType = init.sampleType;
    this.flags = init.flags;
    this.files = init.files;
    this.nSamples = init.nSamples;
    this.rate = init.rate;
    this.#data = init.data;
    this.#annotations = init.annotations;
    this.#setSha256 = init.setSha256;
    this.#tree = init.tree;
  }

  /** Opens a `.set` (and its `.fdt`), inside `tree` (by default the file's folder). */
  static async open(path: string, within?: SourceTree): Promise<EeglabReader> {
    const tree = within ?? (await SourceTree.around(path));
    const name = baseName(path);
    const parts = await readParts(path, name, tree);
    try {
      return await EeglabReader.#build(path, name, parts, tree);
    } catch (err) {
      parts.mat73?.close();
      if (parts.mat73 && !isConversionError(err)) {
        throw new CorruptOrTruncatedError(`${name} is a MAT v7.3 file with unreadable content: it is corrupt or truncated.`, { cause: err });
      }
      throw err;
    }
  }

  static async #build(path: string, name: string, { fields, mat73, sha256 }: EeglabParts, tree: SourceTree): Promise<EeglabReader> {
    const value = (key: string) => fields.get(key) as MatValue | undefined;
    const nbchan = matNumber(value('nbchan'));
    const pnts = matNumber(value('pnts'));
    const trials = matNumber(value('trials')) ?? 1;
    const srate = matNumber(value('srate'));
    if (nbchan === undefined || pnts === undefined || srate === undefined) {
      throw new CorruptOrTruncatedError(`${name} is not an EEGLAB dataset: it lacks nbchan, pnts or srate.`);
    }
    if (!Number.isInteger(nbchan) || nbchan < 0 || !Number.isInteger(pnts) || pnts < 0 || !Number.isInteger(trials) || trials < 1) {
      throw new CorruptOrTruncatedError(`${name} has impossible sizes (nbchan=${nbchan}, pnts=${pnts}, trials=${trials}).`);
    }
    if (!(srate > 0) || !Number.isFinite(srate)) throw new CorruptOrTruncatedError(`${name} has an invalid sampling rate (srate=${srate}).`);
    checkSamplingRate(name, srate, `srate=${srate}`);
    if (trials > 1) throw new NotContinuousError(`${name} is epoched (${trials} trials of ${pnts} samples); only continuous recordings are supported.`);
    if (nbchan === 0 || pnts === 0) throw new EmptyRecordingError(`${name} holds no samples (nbchan=${nbchan}, pnts=${pnts}).`);
    checkChannelCount(name, nbchan);

    const flags: string[] = [];
    const files = [path];
    const chanlocs = value('chanlocs');
    const nLocs = chanlocs?.kind === 'struct' ? chanlocs.items.length : 0;
    if (nLocs > 0 && nLocs !== nbchan) throw new ChannelCountMismatchError(`${name} has nbchan=${nbchan} but ${nLocs} channel locations.`);

    const rawData = fields.get('data');
    let data: DataSource;
    let sampleType: 'float32' | 'float64';
    if (mat73 && mat73.isDataset(rawData)) {
      const shape = rawData.shape ?? [];
      if (shape.length !== 2 || shape[1] !== nbchan || shape[0] !== pnts) {
        throw new ChannelCountMismatchError(`${name}: the data matrix is ${[...shape].reverse().join('x')}, not nbchan x pnts = ${nbchan}x${pnts}.`);
      }
      sampleType = String(rawData.dtype).includes('d') ? 'float64' : 'float32';
      data = { kind: 'hdf5', file: mat73, dataset: rawData };
    } else if (isMatValue(rawData) && rawData.kind === 'numeric') {
      const rows = rawData.dims[0] ?? 0;
      if (rows !== nbchan) throw new ChannelCountMismatchError(`${name}: the data matrix has ${rows} rows but nbchan is ${nbchan}.`);
      if (rawData.data.length !== nbchan * pnts) throw new CorruptOrTruncatedError(`${name}: the data matrix holds ${rawData.data.length} values, not ${nbchan}x${pnts}.`);
      sampleType = rawData.className === 'double' ? 'float64' : 'float32';
      // Kept as stored (MATLAB may store doubles as bytes): each block is converted to the sample type as it is read.
      data = { kind: 'inline', array: rawData.data };
    } else {
      const named = matString(isMatValue(rawData) ? rawData : undefined) ?? matString(value('datfile'));
      const fdt = await findCompanion(path, named, '.fdt', tree);
      if (!fdt) throw new FileReadError(`The data file ${named ?? `${name.replace(/\.set$/, '')}.fdt`} of ${name} does not exist.`);
      if (fdt.recovered) flags.push('eeglab_fdt_recovered');
      files.push(fdt.path);
      const source = await FileSource.open(fdt.path, tree);
      const expected = nbchan * pnts * 4;
      if (source.size !== expected) {
        await source.close();
        const fdtName = baseName(fdt.path);
        if (source.size === 0) throw new EmptyRecordingError(`The data file ${fdtName} is empty (0 bytes).`);
        if (source.size % (4 * pnts) === 0) {
          throw new ChannelCountMismatchError(`${fdtName} holds ${source.size / (4 * pnts)} channels of ${pnts} samples, but ${name} says ${nbchan}.`);
        }
        throw new CorruptOrTruncatedError(`${fdtName} is ${source.size} bytes, but ${nbchan} channels x ${pnts} float32 samples need ${expected}.`);
      }
      sampleType = 'float32';
      data = { kind: 'fdt', source };
    }

    const rate = snapRate(srate);
    const channels: ChannelInfo[] = [];
    for (let c = 0; c < nbchan; c++) {
      const label = matString(matField(chanlocs, 'labels', c))?.trim() || `Ch${c + 1}`;
      const type = matString(matField(chanlocs, 'type', c))?.trim().toUpperCase() ?? '';
      channels.push({ label, type, unit: 'uV', rate, nSamples: pnts, scale: 1, offset: 0 });
    }
    return new EeglabReader({ channels, sampleType, flags, files, nSamples: pnts, rate, data, annotations: readEvents(value('event'), srate), setSha256: sha256, tree });
  }

  async *blocks(): AsyncGenerator<SampleArray[]> {
    if (this.#consumed) throw new Error('EeglabReader.blocks() can be iterated once');
    this.#consumed = true;
    const nChannels = this.channels.length;
    const size = this.sampleType === 'float32' ? 4 : 8;
    const perBlock = Math.max(1, Math.floor(batchBytes / (nChannels * size)));
    for (let s = 0; s < this.nSamples; s += perBlock) {
      const n = Math.min(perBlock, this.nSamples - s);
      const data = this.#data;
      let view: MatNumericArray;
      if (data.kind === 'inline') {
        view = data.array.subarray(s * nChannels, (s + n) * nChannels);
      } else if (data.kind === 'hdf5') {
        view = data.file.slice(data.dataset, s, s + n);
      } else {
        const bytes = await data.source.read(s * nChannels * 4, n * nChannels * 4);
        if (bytes.length < n * nChannels * 4) throw new CorruptOrTruncatedError(`${baseName(data.source.path)} ended while it was being read.`);
        view = typedView('float32', bytes) as Float32Array;
      }
      if (view.length < n * nChannels) throw new CorruptOrTruncatedError(`The data of ${baseName(this.files[0]!)} ended early.`);
      yield deinterleave(view as SampleArray, nChannels, n, this.sampleType);
    }
  }

  annotations(): Annotation[] {
    return this.#annotations;
  }

  segments(): Segment[] {
    return [{ storedStart: 0, onset: 0, duration: this.nSamples / this.rate }];
  }

  async digests(): Promise<string[]> {
    const set = this.#setSha256 ?? (await fileSha256(this.files[0]!, this.#tree));
    return this.#data.kind === 'fdt' ? [set, await this.#data.source.sha256()] : [set];
  }

  async close(): Promise<void> {
    if (this.#data.kind === 'fdt') await this.#data.source.close();
    if (this.#data.kind === 'hdf5') this.#data.file.close();
  }
}

async function readParts(path: string, name: string, tree: SourceTree): Promise<EeglabParts> {
  const source = await FileSource.open(path, tree);
  let head: Uint8Array;
  try {
    if (source.size === 0) throw new EmptyRecordingError(`${name} is empty (0 bytes).`);
    head = await source.read(0, 1024);
    if (isMat5(head)) {
      if (source.size > maxSetBytes) throw new CorruptOrTruncatedError(`${name} is larger than 1 GiB; save EEGLAB data in a separate .fdt file.`);
      // Only what is read: the EEG struct, or else its fields saved as variables; other variables are not inflated.
      const bytes = await source.read(0, source.size);
      const vars = parseMat5(bytes, name, { only: new Set(['EEG']) });
      const eeg = vars.get('EEG');
      const fields = eeg?.kind === 'struct' && eeg.items.length === 1 ? eeg.items[0]! : eeg ? vars : parseMat5(bytes, name, { only: eegFields });
      return { fields, sha256: await source.sha256() };
    }
  } finally {
    await source.close();
  }
  const text = new TextDecoder('latin1').decode(head.subarray(0, 19));
  if (text.startsWith('MATLAB 7.3 MAT-file') || hasHdf5Signature(head, 0) || hasHdf5Signature(head, 512)) {
    const mat73 = await Mat73File.open(path, name);
    try {
      return { fields: mat73.fields('EEG', new Set(['data'])), mat73 };
    } catch (err) {
      mat73.close();
      throw err;
    }
  }
  if (text.startsWith('MATLAB')) throw new CorruptOrTruncatedError(`${name} is a MAT file of an unknown version ("${text}").`);
  throw new CorruptOrTruncatedError(`${name} is not an EEGLAB dataset: it is neither a MAT v5 nor a MAT v7.3 file.`);
}

function hasHdf5Signature(bytes: Uint8Array, at: number): boolean {
  return bytes.length >= at + 8 && hdf5Signature.every((b, i) => bytes[at + i] === b);
}

function isMatValue(value: unknown): value is MatValue {
  return typeof value === 'object' && value !== null && 'kind' in value;
}

/** EEG.event: latency in samples, 1-based, maybe fractional; duration in samples; type text or number. */
function readEvents(event: MatValue | undefined, srate: number): Annotation[] {
  if (event?.kind !== 'struct') return [];
  const out: Annotation[] = [];
  for (let i = 0; i < event.items.length; i++) {
    const latency = matNumber(matField(event, 'latency', i));
    if (latency === undefined || !Number.isFinite(latency)) continue;
    const type = matField(event, 'type', i);
    const description = matString(type) ?? (matNumber(type) !== undefined ? String(matNumber(type)) : 'n/a');
    const duration = matNumber(matField(event, 'duration', i));
    out.push({ onset: (latency - 1) / srate, duration: duration !== undefined && Number.isFinite(duration) && duration > 0 ? duration / srate : 0, description });
  }
  return out;
}
