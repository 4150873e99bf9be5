/** Reads the BIDS sidecars that apply to one recording (inheritance principle) into what the store writer takes. */
import { posix } from 'node:path';
import type { SourceTree } from './source-tree.js';
import type { Annotation } from './types.js';
import { applicableFiles, type DirectoryLister } from './bids/sidecar-files.js';
import { parseTsv, cell, type TsvTable } from './bids/tsv-table.js';
import { eventsFrom } from './bids/events-tsv.js';

export interface RecordingSidecars {
  /** Merged `_<modality>.json`. */
  sidecar: Record<string, unknown>;
  channels: TsvTable | undefined;
  events: Annotation[] | undefined;
  electrodes: { name: string; x: number | null; y: number | null; z: number | null }[] | undefined;
  /** Sidecar files used, relative to the root. */
  files: string[];
  flags: string[];
}

/**
 * The sidecars of the recording at `path` (relative to `root`), read through `tree`. A sidecar that may not be
 * read (a link, one leading out of the tree) fails the recording with the tree's reason; one that is no valid
 * JSON is flagged.
 */
export async function readRecordingSidecars(root: string, tree: SourceTree, list: DirectoryLister, path: string, modality: string): Promise<RecordingSidecars> {
  const files: string[] = [];
  const flags: string[] = [];
  const readText = async (rel: string) => {
    files.push(rel);
    return tree.readText(posix.join(root, rel));
  };
  const lowest = async (suffix: string, ignored: string[] = []) => (await applicableFiles(list, path, suffix, '.tsv', ignored)).at(-1);

  const sidecar: Record<string, unknown> = {};
  for (const rel of await applicableFiles(list, path, modality, '.json')) {
    const text = await readText(rel);
    try {
      const value = JSON.parse(text) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) Object.assign(sidecar, value);
    } catch {
      flags.push(`sidecar_unreadable:${rel}`);
    }
  }
  const channelsPath = await lowest('channels');
  const channels = channelsPath ? parseTsv(await readText(channelsPath)) : undefined;
  const eventsPath = await lowest('events');
  const events = eventsPath ? eventsFrom(parseTsv(await readText(eventsPath))) : undefined;
  const electrodesPath = await lowest('electrodes', ['space']);
  const electrodes = electrodesPath
    ? parseTsv(await readText(electrodesPath)).rows.map((row) => ({
        name: row['name'] ?? '',
        x: numberOrNull(cell(row, 'x')),
        y: numberOrNull(cell(row, 'y')),
        z: numberOrNull(cell(row, 'z')),
      }))
    : undefined;
  return { sidecar, channels, events, electrodes, files, flags };
}

function numberOrNull(text: string | undefined): number | null {
  const value = Number(text);
  return text !== undefined && Number.isFinite(value) ? value : null;
}
