/** Finds the recordings of a BIDS tree: primary data files in sub-<label>/[ses-<label>/]<eeg|emg|ieeg>/ folders. */
import { readdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { primaryExtensions, extensionOf } from '../readers/open-recording.js';

export const modalities = ['eeg', 'emg', 'ieeg'] as const;

export interface FoundRecording {
  /** Path of the primary file relative to the dataset root, with `/`. */
  path: string;
  /** Store path: the BIDS path with its extension replaced by `.zarr` (docs/conversion.md). */
  zarr: string;
  modality: string;
}

export function zarrPathFor(path: string): string {
  return path.replace(/\.[^./]+$/, '') + '.zarr';
}

export async function findRecordings(root: string): Promise<FoundRecording[]> {
  const found: FoundRecording[] = [];
  for (const subject of await dirs(root, '')) {
    if (!subject.startsWith('sub-')) continue;
    const level = await dirs(root, subject);
    const datatypeDirs = [
      ...level.filter((d) => modalities.includes(d as never)).map((d) => `${subject}/${d}`),
      ...(await Promise.all(level.filter((d) => d.startsWith('ses-')).map(async (s) => (await dirs(root, `${subject}/${s}`)).filter((d) => modalities.includes(d as never)).map((d) => `${subject}/${s}/${d}`)))).flat(),
    ];
    for (const dir of datatypeDirs) {
      const modality = posix.basename(dir);
      const names = (await readdir(posix.join(root, dir), { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name).sort();
      for (const name of names) {
        if (!primaryExtensions.includes(extensionOf(name))) continue;
        const path = `${dir}/${name}`;
        found.push({ path, zarr: zarrPathFor(path), modality });
      }
    }
  }
  return found.sort((a, b) => a.path.localeCompare(b.path));
}

async function dirs(root: string, dir: string): Promise<string[]> {
  try {
    return (await readdir(posix.join(root, dir), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  } catch {
    return [];
  }
}
