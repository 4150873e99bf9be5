/**
 * Writes one recording as an nds-zarr store (docs/conversion.md): one group per (modality, native rate) with a
 * lossless level 0 and a min/max view pyramid, an events group, and the root attributes. Chunks are
 * written as they fill; every zarr.json is written after the data, the root one last, so a store whose
 * root metadata is present is complete.
 */
import { systemClock } from '../../core/clock.js';
import type { Annotation, ChannelInfo, RecordingReader } from '../types.js';
import { EmptyRecordingError } from '../conversion-errors.js';
import { ZstdChunkCodec, type ChunkCodec } from './chunk-codec.js';
import type { StoreSink } from './store-sink.js';
import { GroupWriter, maxChunkChannels } from './group-writer.js';
import { viewChunkColumns, viewDownsample } from './envelope-level.js';
import { writeEvents } from './events-arrays.js';
import { PutQueue } from './put-queue.js';
import { arrayMetadata, chunkSamplesFor, groupMetadata, groupName } from './zarr-metadata.js';
import { converterName, converterVersion, storeFormat, storeFormatVersion, type GroupSummary, type StoreSummary } from './store-layout.js';

/** What BIDS (or the caller) says about a channel, beyond what the file says. Index-aligned with `reader.channels`. */
export interface ChannelDetails {
  type?: string;
  /** Used when the file has no unit; otherwise recorded as `bids_unit` when it differs. */
  unit?: string;
  status?: string;
  /** Extra columns (e.g. channels.tsv description, low_cutoff), copied into the channel entry. */
  extra?: Record<string, unknown>;
}

export interface WriteStoreOptions {
  /** BIDS datatype of the recording (eeg, emg, ieeg); default eeg. */
  modality?: string;
  /** Path of the primary file as the store records it (BIDS path, or the file name). */
  sourcePath: string;
  /** Git commit of the source, when there is one. */
  sourceCommit?: string | null;
  /**
   * Source files with their SHA-256, or a function that gives them once every sample has been read (so
   * the digests can be taken from the reads the conversion made).
   */
  files: SourceFile[] | (() => Promise<SourceFile[]>);
  /** Merged `_<modality>.json` sidecar. */
  sidecar?: Record<string, unknown>;
  channelDetails?: (ChannelDetails | undefined)[];
  /** Events that replace the file's own annotations (BIDS events.tsv). */
  events?: Annotation[];
  /** Extra root attributes (e.g. electrodes). */
  rootExtras?: Record<string, unknown>;
  codec?: ChunkCodec;
  /** Called after each block with the fraction of samples written. */
  onProgress?: (fraction: number) => void;
  /** The time written as the store's `created_utc`; the system clock when left out. */
  now?: () => Date;
}

export interface SourceFile {
  path: string;
  sha256: string;
}

const defaultTypes: Record<string, string> = { eeg: 'EEG', emg: 'EMG', ieeg: 'SEEG' };

export async function writeStore(reader: RecordingReader, target: StoreSink, options: WriteStoreOptions): Promise<StoreSummary> {
  const modality = (options.modality ?? 'eeg').toLowerCase();
  const codec = options.codec ?? new ZstdChunkCodec();
  // Each encoded chunk goes back to the codec once written, so its buffer serves a later chunk.
  const sink = new PutQueue(target, 8, (bytes) => codec.release?.(bytes));
  const channels = reader.channels;
  if (channels.length === 0) throw new EmptyRecordingError(`${options.sourcePath} has no signal channels.`);

  const byRate = new Map<number, number[]>();
  channels.forEach((channel, i) => {
    const indices = byRate.get(channel.rate);
    if (indices) indices.push(i);
    else byRate.set(channel.rate, [i]);
  });
  const groups = [...byRate.entries()]
    .sort((a, b) => b[0] - a[0])
    .map(([rate, indices]) => {
      const nSamples = channels[indices[0]!]!.nSamples;
      return {
        rate,
        writer: new GroupWriter({
          name: groupName(modality, rate),
          channelIndices: indices,
          nSamples,
          chunkSamples: chunkSamplesFor(rate, nSamples),
          type: reader.sampleType,
          sink,
          codec,
        }),
      };
    });
  try {
    if (groups.every((g) => g.writer.nSamples === 0)) throw new EmptyRecordingError(`${options.sourcePath} holds no samples.`);
    return await writeGroups(reader, target, sink, codec, groups, modality, options);
  } finally {
    // A failure leaves writes in flight: they end before the caller hears of it and cleans up.
    await sink.settle();
    // The writers' buffers serve the next recording; nothing of this one reads them any more.
    for (const { writer } of groups) writer.release();
  }
}

async function writeGroups(
  reader: RecordingReader,
  target: StoreSink,
  sink: PutQueue,
  codec: ChunkCodec,
  groups: Array<{ rate: number; writer: GroupWriter }>,
  modality: string,
  options: WriteStoreOptions,
): Promise<StoreSummary> {
  const channels = reader.channels;
  const total = groups.reduce((sum, g) => sum + g.writer.nSamples * g.writer.channelIndices.length, 0);
  let done = 0;
  for await (const block of reader.blocks()) {
    for (const { writer } of groups) {
      await writer.push(block);
      done += block[writer.channelIndices[0]!]!.length * writer.channelIndices.length;
    }
    options.onProgress?.(done / total);
  }

  const summaries: GroupSummary[] = [];
  for (const { rate, writer } of groups) {
    await writer.finish();
    const entries = writer.channelIndices.map((index, row) => channelEntry(channels[index]!, options.channelDetails?.[index], row, modality));
    const levels = Array.from({ length: writer.nViewLevels }, (_, i) => i + 1);
    const nCh = writer.channelIndices.length;
    await sink.put(
      `${writer.name}/0/zarr.json`,
      arrayMetadata({
        shape: [nCh, writer.nSamples],
        chunkShape: [Math.min(nCh, maxChunkChannels), writer.chunkSamples],
        dataType: reader.sampleType,
        codecs: codec.metadata,
        dimensionNames: ['channel', 'time'],
        attributes: {
          level: 0,
          kind: 'signal',
          scale: entries.map((e) => e.scale),
          offset: entries.map((e) => e.offset),
          physical_formula: 'physical = digital * scale + offset',
        },
      }),
    );
    let length = writer.nSamples;
    for (const level of levels) {
      length = Math.ceil(length / viewDownsample);
      await sink.put(
        `${writer.name}/view/${level}/zarr.json`,
        arrayMetadata({
          shape: [2, nCh, length],
          chunkShape: [2, nCh, viewChunkColumns],
          dataType: reader.sampleType,
          codecs: codec.metadata,
          dimensionNames: ['minmax', 'channel', 'time'],
          attributes: { level, downsample_factor: viewDownsample ** level, rate_effective: rate / viewDownsample ** level, kind: 'minmax_envelope', axis0: ['min', 'max'] },
        }),
      );
    }
    if (levels.length > 0) await sink.put(`${writer.name}/view/zarr.json`, groupMetadata({ n_view_levels: levels.length }));
    const summary: GroupSummary = {
      name: writer.name,
      modality,
      rate,
      n_channels: nCh,
      n_samples: writer.nSamples,
      duration_s: writer.nSamples / rate,
      chunk_samples: writer.chunkSamples,
    };
    summaries.push(summary);
    await sink.put(
      `${writer.name}/zarr.json`,
      groupMetadata({
        ...summary,
        channels: entries,
        n_view_levels: levels.length,
        view_levels: levels,
        view_downsample: viewDownsample,
        view_chunk_columns: viewChunkColumns,
      }),
    );
  }

  const events = options.events ?? reader.annotations();
  const trialTypes = await writeEvents(sink, codec, events, summaries);
  const duration = Math.max(...summaries.map((s) => s.duration_s));
  const segments = reader.segments();
  const sidecar = options.sidecar ?? {};
  const powerLine = typeof sidecar['PowerLineFrequency'] === 'number' ? sidecar['PowerLineFrequency'] : null;
  const flags = [...reader.flags];
  const files = typeof options.files === 'function' ? await options.files() : options.files;
  // The root zarr.json goes last, after every other object is safely written.
  await sink.drain();
  await target.put(
    'zarr.json',
    groupMetadata({
      format: storeFormat,
      format_version: storeFormatVersion,
      source: { path: options.sourcePath, format: reader.format, commit: options.sourceCommit ?? null, files },
      recording: {
        start_time: reader.startTime,
        duration_s: duration,
        power_line_frequency: powerLine,
        ...(segments.length > 1 ? { segments: segments.map((s) => ({ stored_start_s: s.storedStart, onset_s: s.onset, duration_s: s.duration })) } : {}),
      },
      sidecar,
      channel_groups: summaries.map((s) => ({ ...s, labels: groups.find((g) => g.writer.name === s.name)!.writer.channelIndices.map((i) => channels[i]!.label) })),
      converter: { name: converterName, version: converterVersion },
      created_utc: (options.now ?? systemClock.now)().toISOString(),
      ...(flags.length > 0 ? { flags } : {}),
      ...options.rootExtras,
    }),
  );
  return { groups: summaries, modalities: [modality], duration_s: duration, n_events: events.length, trial_types: trialTypes, flags };
}

function channelEntry(channel: ChannelInfo, details: ChannelDetails | undefined, row: number, modality: string): Record<string, unknown> & { scale: number; offset: number } {
  const unit = channel.unit || details?.unit || '';
  const entry: Record<string, unknown> & { scale: number; offset: number } = {
    label: channel.label,
    type: details?.type || channel.type || defaultTypes[modality] || 'MISC',
    unit,
    status: details?.status || 'n/a',
    scale: channel.scale,
    offset: channel.offset,
    row_index: row,
    rate: channel.rate,
  };
  if (details?.unit && details.unit !== unit) entry['bids_unit'] = details.unit;
  if (channel.prefilter) entry['prefilter'] = channel.prefilter;
  if (channel.transducer) entry['transducer'] = channel.transducer;
  if (channel.digitalMin !== undefined) {
    Object.assign(entry, { digital_min: channel.digitalMin, digital_max: channel.digitalMax, physical_min: channel.physicalMin, physical_max: channel.physicalMax });
  }
  return { ...details?.extra, ...entry };
}
