/**
 * What a reader needs from one store's metadata (docs/conversion.md, "The store"): its groups with their
 * channels, level 0's digital type, chunk shape, scale and offset, and the root's entity tag. Read fresh here;
 * `store-metadata-cache.ts` keeps it by that tag for the read side.
 */
import type { Channel, ChannelGroup } from '../client/index.js';
import type { ObjectStore } from '../objects/object-store.js';
import { readBody } from '../objects/read-object.js';
import type { SampleType } from '../formats/types.js';

/** A channel as the catalogue lists it, with what turns its digital values into physical ones. */
export interface StoreChannel extends Channel {
  scale: number;
  offset: number;
  /** The physical values the source could record (EDF/BDF physical minimum and maximum), when it says. */
  range?: [number, number];
}

/** A channel group as the catalogue lists it, with how its level 0 is stored. */
export interface StoreGroup extends ChannelGroup {
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

async function readJson(objects: Pick<ObjectStore, 'get'>, key: string): Promise<{ value: Record<string, any>; etag: string } | undefined> {
  const found = await objects.get(key);
  if (!found) return undefined;
  const text = (await readBody(found.body)).toString('utf8');
  return { value: JSON.parse(text) as Record<string, any>, etag: found.info.etag };
}

/** The object key prefix of a store: `<id>/zarr/<zarr>/`. */
export function storePrefix(datasetId: string, zarr: string): string {
  return `${datasetId}/zarr/${zarr}/`;
}

/** The store's metadata, read now; `undefined` when the store (its root `zarr.json`) is not there. */
export async function readStoreMetadata(objects: Pick<ObjectStore, 'get'>, datasetId: string, zarr: string): Promise<StoreMetadata | undefined> {
  const prefix = storePrefix(datasetId, zarr);
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
  return { prefix, etag: root.etag, root: attributes, groups };
}

/** A store-relative JSON object (the events group's metadata, say); `undefined` when absent. */
export async function readStoreJson(objects: Pick<ObjectStore, 'get'>, key: string): Promise<Record<string, any> | undefined> {
  return (await readJson(objects, key))?.value;
}
