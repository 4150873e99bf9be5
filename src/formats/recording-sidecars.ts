/** Reads the BIDS sidecars that apply to one recording (inheritance principle) into what the store writer takes. */
import { posix } from 'node:path';
import type { SourceTree } from './source-tree.js';
import type { Annotation } from './types.js';
import { UnsupportedFormatError } from './conversion-errors.js';
import { applicableFiles, type DirectoryLister } from './bids/sidecar-files.js';
import { parseTsvRows, cellAt, valueAt, type TsvRows } from './bids/tsv-table.js';
import { eventsFrom } from './bids/events-tsv.js';

/**
 * The largest sidecar file read. Sidecars are read whole and parsed in memory, inside `nds serve`; real ones
 * are kilobytes, a long recording's events.tsv a few megabytes.
 */
export const MAX_SIDECAR_BYTES = 16 << 20;

export interface RecordingSidecars {
  /** Merged `_<modality>.json`. */
  sidecar: Record<string, unknown>;
  channels: TsvRows | undefined;
  events: Annotation[] | undefined;
  electrodes: { name: string; x: number | null; y: number | null; z: number | null }[] | undefined;
  /** Sidecar files used, relative to the root. */
  files: string[];
  flags: string[];
}

/**
 * The sidecars of the recording at `path` (relative to `root`), read through `tree`. A sidecar that may not be
 * read (a link, one leading out of the tree) fails the recording with the tree's reason, one larger than
 * `MAX_SIDECAR_BYTES` or a table beyond the bounds of `parseTsvRows` with `unsupported_format`; one that is
 * no valid JSON is flagged.
 */
export async function readRecordingSidecars(root: string, tree: SourceTree, list: DirectoryLister, path: string, modality: string): Promise<RecordingSidecars> {
  const files: string[] = [];
  const flags: string[] = [];
  const readText = async (rel: string) => {
    files.push(rel);
    const handle = await tree.open(posix.join(root, rel));
    try {
      const { size } = await handle.stat();
      if (size > MAX_SIDECAR_BYTES) {
        throw new UnsupportedFormatError(`${rel} is ${size.toLocaleString('en')} bytes, more than the ${MAX_SIDECAR_BYTES >> 20} MiB nds reads of a sidecar file.`);
      }
      return await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  };
  const readTable = async (rel: string) => parseTsvRows(await readText(rel), rel);
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
  const channels = channelsPath ? await readTable(channelsPath) : undefined;
  const eventsPath = await lowest('events');
  const events = eventsPath ? eventsFrom(await readTable(eventsPath)) : undefined;
  const electrodesPath = await lowest('electrodes', ['space']);
  const electrodes = electrodesPath ? electrodesFrom(await readTable(electrodesPath)) : undefined;
  return { sidecar, channels, events, electrodes, files, flags };
}

function electrodesFrom(table: TsvRows): RecordingSidecars['electrodes'] {
  const at = (name: string) => table.columns.indexOf(name);
  const [nameAt, xAt, yAt, zAt] = [at('name'), at('x'), at('y'), at('z')];
  return table.rows.map((row) => ({
    name: valueAt(row, nameAt) ?? '',
    x: numberOrNull(cellAt(row, xAt)),
    y: numberOrNull(cellAt(row, yAt)),
    z: numberOrNull(cellAt(row, zAt)),
  }));
}

function numberOrNull(text: string | undefined): number | null {
  const value = Number(text);
  return text !== undefined && Number.isFinite(value) ? value : null;
}
