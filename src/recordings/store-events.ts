/**
 * A store's events (`events/`: onset, duration, code, with `label_map`; and `events/table.json`, named by the
 * group's `table` attribute: `columns`, every column of the BIDS `_events.tsv`, and `sample_index`, each
 * event's sample at each group's rate).
 * Stores written before those attributes existed answer the same shape: `trial_type` from the label, samples
 * computed from onset and rate.
 */
import type { ObjectStore } from '../objects/object-store.js';
import { decodeChunk } from './chunk-decoder.js';
import { readStoreJson, type StoreMetadata } from './store-metadata.js';

/** One event: onset and duration in seconds, its sample in the chosen group, and every other column. */
export type StoreEvent = { onset: number; duration: number; sample: number; trial_type: string | null; value: string | null } & Record<string, string | number | null>;

async function readColumn(objects: Pick<ObjectStore, 'get' | 'readAll'>, key: string, n: number, type: 'float64' | 'int32'): Promise<ArrayLike<number>> {
  if (n === 0) return [];
  const frame = await objects.readAll(key);
  if (!frame) return new Float64Array(n);
  const bytes = await decodeChunk(frame, n * (type === 'float64' ? 8 : 4));
  const copy = bytes.slice(0, n * (type === 'float64' ? 8 : 4));
  return type === 'float64' ? new Float64Array(copy.buffer) : new Int32Array(copy.buffer);
}

/** Labels of every event (`trial_type` or the description the converter kept), in onset order. */
export async function readEventLabels(objects: Pick<ObjectStore, 'get' | 'readAll'>, store: StoreMetadata): Promise<string[]> {
  const attrs = (await readStoreJson(objects, `${store.prefix}events/zarr.json`))?.attributes ?? {};
  const n = Number(attrs.n_events ?? 0);
  const labelMap = (attrs.label_map ?? {}) as Record<string, string>;
  const code = await readColumn(objects, `${store.prefix}events/code/c/0`, n, 'int32');
  return Array.from(code, (c) => labelMap[String(c)] ?? 'n/a');
}

/** Every event of the store, with its sample index at `groupName`'s rate (the first group when left out). */
export async function readStoreEvents(objects: Pick<ObjectStore, 'get' | 'readAll'>, store: StoreMetadata, groupName?: string): Promise<StoreEvent[]> {
  const attrs = (await readStoreJson(objects, `${store.prefix}events/zarr.json`))?.attributes ?? {};
  const n = Number(attrs.n_events ?? 0);
  const labelMap = (attrs.label_map ?? {}) as Record<string, string>;
  const [onset, duration, code] = await Promise.all([
    readColumn(objects, `${store.prefix}events/onset/c/0`, n, 'float64'),
    readColumn(objects, `${store.prefix}events/duration/c/0`, n, 'float64'),
    readColumn(objects, `${store.prefix}events/code/c/0`, n, 'int32'),
  ]);
  const group = store.groups.find((g) => g.name === groupName) ?? store.groups[0];
  const table = typeof attrs.table === 'string' ? ((await readStoreJson(objects, `${store.prefix}events/${attrs.table}`)) ?? {}) : {};
  const columns = (table.columns ?? {}) as Record<string, Array<string | null>>;
  const samples = ((table.sample_index ?? {}) as Record<string, number[]>)[group?.name ?? ''];
  const events: StoreEvent[] = [];
  for (let i = 0; i < n; i++) {
    const extra: Record<string, string | null> = {};
    // onset and duration come as numbers below; the TSV's own `sample` (of the source file) is kept as `tsv_sample`.
    for (const [name, values] of Object.entries(columns)) {
      if (name === 'onset' || name === 'duration') continue;
      extra[name === 'sample' ? 'tsv_sample' : name] = values[i] ?? null;
    }
    const label = labelMap[String(code[i])] ?? null;
    const hasTable = Object.keys(columns).length > 0;
    events.push({
      ...extra,
      onset: onset[i]!,
      duration: duration[i]!,
      sample: samples?.[i] ?? (group ? Math.round(onset[i]! * group.rate) : 0),
      trial_type: hasTable ? (extra['trial_type'] ?? null) : label,
      value: hasTable ? (extra['value'] ?? null) : null,
    } as StoreEvent);
  }
  return events;
}
