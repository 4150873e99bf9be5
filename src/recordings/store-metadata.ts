/**
 * What a reader needs from one store's metadata (docs/conversion.md, "The store"): its groups with their
 * channels, level 0's digital type, chunk shape, scale and offset, and the root's entity tag. The metadata of
 * a store is cached by that tag: a request reads the root `zarr.json` once, the rest only when it changed.
 */
import type { ObjectStore } from '../objects/object-store.js';
import { readBody } from '../objects/read-object.js';
import type { SampleType } from '../formats/types.js';

export interface StoreChannel {
  label: string;
  type: string;
  unit: string;
  status: string;
  scale: number;
  offset: number;
  /** The physical values the source could record (EDF/BDF physical minimum and maximum), when it says. */
  range?: [number, number];
}

export interface StoreGroup {
  name: string;
  modality: string;
  rate: number;
  n_channels: number;
  n_samples: number;
  duration_s: number;
  /** Level 0's chunk shape: rows (≤ 64 channels) by samples. */
  chunk_channels: number;
  chunk_samples: number;
  dtype: SampleType;
  channels: StoreChannel[];
}

export interface StoreMetadata {
  /** The object key prefix of the store: `<id>/zarr/<zarr>/`. */
  prefix: string;
  /** The root `zarr.json`'s entity tag: it changes whenever the store is rewritten. */
  etag: string;
  root: Record<string, unknown>;
  groups: StoreGroup[];
}

const cache = new Map<string, StoreMetadata>();
const CACHE_LIMIT = 512;

async function readJson(objects: Pick<ObjectStore, 'get'>, key: string): Promise<{ value: Record<string, any>; etag: string } | undefined> {
  const found = await objects.get(key);
  if (!found) return undefined;
  const text = (await readBody(found.body)).toString('utf8');
  return { value: JSON.parse(text) as Record<string, any>, etag: found.info.etag };
}

/** The store's metadata; `undefined` when the store (its root `zarr.json`) is not there. */
export async function readStoreMetadata(objects: Pick<ObjectStore, 'get' | 'head'>, datasetId: string, zarr: string): Promise<StoreMetadata | undefined> {
  const prefix = `${datasetId}/zarr/${zarr}/`;
  // A cached store is checked by the root's entity tag alone (a stat for the folder store, a HEAD for S3).
  const cached = cache.get(prefix);
  if (cached && (await objects.head(`${prefix}zarr.json`))?.etag === cached.etag) return cached;
  const root = await readJson(objects, `${prefix}zarr.json`);
  if (!root) return undefined;
  const attributes = (root.value.attributes ?? {}) as Record<string, any>;
  const groups: StoreGroup[] = [];
  for (const summary of (attributes.channel_groups ?? []) as Array<Record<string, any>>) {
    const name = String(summary.name);
    const group = (await readJson(objects, `${prefix}${name}/zarr.json`))?.value.attributes ?? {};
    const level0 = (await readJson(objects, `${prefix}${name}/0/zarr.json`))?.value ?? {};
    const chunk = (level0.chunk_grid?.configuration?.chunk_shape ?? [64, group.chunk_samples]) as number[];
    const scale = (level0.attributes?.scale ?? []) as number[];
    const offset = (level0.attributes?.offset ?? []) as number[];
    const channels = ((group.channels ?? []) as Array<Record<string, any>>).map((c, i) => ({
      label: String(c.label),
      type: String(c.type ?? 'MISC'),
      unit: String(c.unit ?? ''),
      status: String(c.status ?? 'n/a'),
      scale: Number(scale[i] ?? c.scale ?? 1),
      offset: Number(offset[i] ?? c.offset ?? 0),
      ...(Number.isFinite(c.physical_min) && Number.isFinite(c.physical_max) && c.physical_min !== c.physical_max
        ? { range: [Math.min(c.physical_min, c.physical_max), Math.max(c.physical_min, c.physical_max)] as [number, number] }
        : {}),
    }));
    const nSamples = Number(group.n_samples ?? summary.n_samples);
    const rate = Number(group.rate ?? summary.rate);
    groups.push({
      name,
      modality: String(group.modality ?? summary.modality ?? ''),
      rate,
      n_channels: channels.length,
      n_samples: nSamples,
      duration_s: nSamples / rate,
      chunk_channels: chunk[0]!,
      chunk_samples: chunk[1]!,
      dtype: String(level0.data_type ?? 'int32') as SampleType,
      channels,
    });
  }
  const metadata: StoreMetadata = { prefix, etag: root.etag, root: attributes, groups };
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(prefix, metadata);
  return metadata;
}

/** A store-relative JSON object (the events group's metadata, say); `undefined` when absent. */
export async function readStoreJson(objects: Pick<ObjectStore, 'get'>, key: string): Promise<Record<string, any> | undefined> {
  return (await readJson(objects, key))?.value;
}
