/**
 * Converts one recording into one store: opens the reader, applies the BIDS sidecars when the recording
 * sits in a BIDS tree, hashes the source files (data files as they are read), and writes the store through
 * a sink. Throws a `ConversionError` for a recording that cannot be converted.
 */
import { posix, relative, basename, dirname } from 'node:path';
import type { StoreSink } from './zarr/store-sink.js';
import type { ChunkCodec } from './zarr/chunk-codec.js';
import type { StoreSummary } from './zarr/store-layout.js';
import { writeStore, type ChannelDetails } from './zarr/store-writer.js';
import { openRecording } from './readers/open-recording.js';
import { fileSha256 } from './file-sha256.js';
import { folderLister, type DirectoryLister } from './bids/sidecar-files.js';
import { readRecordingSidecars } from './recording-sidecars.js';
import { SourceTree } from './source-tree.js';
import { channelDetailsFrom } from './bids/channels-tsv.js';
import { isConversionError, type FailureCode } from './conversion-errors.js';

export interface ConvertRecordingOptions {
  /** Absolute path of the primary data file. */
  dataPath: string;
  /** The dataset root when the file is part of a BIDS tree; sidecars are applied and paths made relative to it. */
  bidsRoot?: string;
  /** BIDS datatype (eeg, emg, ieeg); default eeg. */
  modality?: string;
  sourceCommit?: string | null;
  sink: StoreSink;
  codec?: ChunkCodec;
  onProgress?: (fraction: number) => void;
  /** Lists a folder of the BIDS tree (default: the real folder, cached). */
  lister?: DirectoryLister;
  /** The time written as the store's `created_utc`; the system clock when left out. */
  now?: () => Date;
  /**
   * Where every file read must lie (a regular file, its real path inside): default the BIDS root, or the
   * data file's folder. The server passes its checkout's tree, which also knows the entries it refused.
   */
  tree?: SourceTree;
}

export async function convertRecording(options: ConvertRecordingOptions): Promise<StoreSummary> {
  const { dataPath, bidsRoot } = options;
  const modality = options.modality ?? 'eeg';
  const base = bidsRoot ?? dirname(dataPath);
  const rel = (p: string) => relative(base, p).split('\\').join('/');
  const sourcePath = bidsRoot ? rel(dataPath) : basename(dataPath);
  const tree = options.tree ?? (await SourceTree.at(base));
  const reader = await openRecording(dataPath, tree);
  try {
    let channelDetails: (ChannelDetails | undefined)[] | undefined;
    let events;
    let sidecar: Record<string, unknown> = {};
    const rootExtras: Record<string, unknown> = {};
    const sidecarFiles: string[] = [];
    if (bidsRoot) {
      const found = await readRecordingSidecars(bidsRoot, tree, options.lister ?? folderLister(bidsRoot), sourcePath, modality);
      sidecar = found.sidecar;
      events = found.events;
      sidecarFiles.push(...found.files);
      if (found.channels) {
        const { details, unmatched } = channelDetailsFrom(found.channels, reader.channels);
        channelDetails = details;
        if (unmatched > 0 || found.channels.rows.length !== reader.channels.length) {
          rootExtras['channels_tsv_mismatch'] = { file_channels: reader.channels.length, tsv_rows: found.channels.rows.length, unmatched };
        }
      }
      if (found.electrodes) rootExtras['electrodes'] = found.electrodes;
      if (found.flags.length > 0) rootExtras['sidecar_flags'] = found.flags;
    }
    // The data files' digests come from the reads the conversion makes anyway: no second pass over them.
    const files = async () => {
      const digests = await reader.digests();
      const out = reader.files.map((path, i) => ({ path: rel(path), sha256: digests[i]! }));
      for (const path of sidecarFiles) out.push({ path, sha256: await fileSha256(posix.join(base, path), tree) });
      return out;
    };
    return await writeStore(reader, options.sink, {
      modality,
      sourcePath,
      sourceCommit: options.sourceCommit ?? null,
      files,
      sidecar,
      ...(channelDetails ? { channelDetails } : {}),
      ...(events ? { events } : {}),
      rootExtras,
      ...(options.codec ? { codec: options.codec } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  } finally {
    await reader.close();
  }
}

/** A failure entry for `failures[]`: a conversion error's code and message, or a generic one for a bug. */
export function failureOf(err: unknown): { code: FailureCode; reason: string } {
  if (isConversionError(err)) return { code: err.code, reason: err.message };
  return { code: 'corrupt_or_truncated', reason: `The converter failed on this file unexpectedly: ${(err as Error)?.message ?? String(err)}.` };
}
