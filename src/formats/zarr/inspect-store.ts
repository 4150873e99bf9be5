/** Reads a store's description back through zarrita, as any Zarr v3 client would (what `nds inspect` shows). */
import * as zarr from 'zarrita';
import { FileSystemStore } from '@zarrita/storage';
import type { Readable } from '@zarrita/storage';
import type { GroupSummary } from './store-layout.js';

export interface StoreDescription {
  format: string;
  source: Record<string, unknown>;
  recording: Record<string, unknown>;
  groups: Array<GroupSummary & { dtype: string; view_levels: number[]; channels: { label: string; type: string; unit: string; status: string }[] }>;
  events: { onset: number; duration: number; label: string }[];
  n_events: number;
}

/** Describes the store at `location` (a folder path, or any zarrita store). Throws when it is not an nds-zarr store. */
export async function inspectStore(location: string | Readable): Promise<StoreDescription> {
  const store = typeof location === 'string' ? new FileSystemStore(location) : location;
  const root = await zarr.open.v3(store, { kind: 'group' });
  const attrs = root.attrs as Record<string, any>;
  if (attrs['format'] !== 'nds-zarr') throw new Error(`not an nds-zarr store (format is ${JSON.stringify(attrs['format'] ?? null)})`);
  const groups: StoreDescription['groups'] = [];
  for (const summary of (attrs['channel_groups'] ?? []) as { name: string }[]) {
    const group = await zarr.open.v3(root.resolve(summary.name), { kind: 'group' });
    const level0 = await zarr.open.v3(root.resolve(`${summary.name}/0`), { kind: 'array' });
    const g = group.attrs as Record<string, any>;
    groups.push({
      name: summary.name,
      modality: g['modality'],
      rate: g['rate'],
      n_channels: g['n_channels'],
      n_samples: g['n_samples'],
      duration_s: g['duration_s'],
      chunk_samples: g['chunk_samples'],
      dtype: level0.dtype,
      view_levels: g['view_levels'] ?? [],
      channels: (g['channels'] ?? []).map((c: Record<string, any>) => ({ label: c['label'], type: c['type'], unit: c['unit'], status: c['status'] })),
    });
  }
  const eventsGroup = await zarr.open.v3(root.resolve('events'), { kind: 'group' });
  const labelMap = ((eventsGroup.attrs as Record<string, any>)['label_map'] ?? {}) as Record<string, string>;
  const read = async (name: string): Promise<number[]> => {
    const array = await zarr.open.v3(root.resolve(`events/${name}`), { kind: 'array' });
    return array.shape[0] === 0 ? [] : Array.from((await zarr.get(array)).data as ArrayLike<number>);
  };
  const [onset, duration, code] = [await read('onset'), await read('duration'), await read('code')];
  return {
    format: attrs['format'],
    source: attrs['source'],
    recording: attrs['recording'],
    groups,
    events: onset.map((o, i) => ({ onset: o, duration: duration[i]!, label: labelMap[String(code[i])] ?? String(code[i]) })),
    n_events: onset.length,
  };
}
