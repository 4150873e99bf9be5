/** Opens a recording by its primary file's extension. Readers load on first use, from a registry. */
import { UnsupportedFormatError } from '../conversion-errors.js';
import type { SourceTree } from '../source-tree.js';
import type { RecordingReader } from '../types.js';
import { baseName } from './file-source.js';

type Opener = (path: string, tree?: SourceTree) => Promise<RecordingReader>;

const openers = new Map<string, () => Promise<Opener>>([
  ['.edf', async () => (await import('./edf-reader.js')).EdfReader.open],
  ['.bdf', async () => (await import('./edf-reader.js')).EdfReader.open],
  ['.vhdr', async () => (await import('./brainvision-reader.js')).BrainVisionReader.open],
  ['.set', async () => (await import('./eeglab-reader.js')).EeglabReader.open],
]);

/** Extensions of primary data files the converter reads (companions: `.vmrk`, `.eeg`, `.fdt`). */
export const primaryExtensions: readonly string[] = [...openers.keys()];

export function extensionOf(path: string): string {
  const name = baseName(path);
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot).toLowerCase();
}

/**
 * Opens the recording whose primary file is `path`. Every file it reads (companions included) must be a
 * regular file inside `tree`, by default the primary file's own folder.
 */
export async function openRecording(path: string, tree?: SourceTree): Promise<RecordingReader> {
  const load = openers.get(extensionOf(path));
  if (!load) throw new UnsupportedFormatError(`${baseName(path)} is not a format the converter reads (EDF, BDF, BrainVision .vhdr, EEGLAB .set).`);
  return (await load())(path, tree);
}
