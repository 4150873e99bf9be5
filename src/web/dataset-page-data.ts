/** What the dataset pages show: datasets the viewer may see, and a dataset's Zarr `index.json`. */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { canSee, datasetsWithOwner, findDataset, type Dataset } from '../datasets/dataset-access.js';
import type { ObjectStore } from '../objects/object-store.js';

/** Public datasets and the user's own, newest first (at most `limit`). */
export async function listPageDatasets(db: Kysely<Database>, user: User | undefined, limit = 200): Promise<Dataset[]> {
  let query = datasetsWithOwner(db);
  query = user
    ? query.where((eb) => eb.or([eb('datasets.visibility', '=', 'public'), eb('datasets.owner_id', '=', user.id)]))
    : query.where('datasets.visibility', '=', 'public');
  return query.orderBy('datasets.created_at', 'desc').orderBy('datasets.id', 'desc').limit(limit).execute();
}

/** The dataset when `user` may see it; undefined otherwise (the page answers 404 either way). */
export async function findPageDataset(db: Kysely<Database>, id: string, user: User | undefined): Promise<Dataset | undefined> {
  const dataset = await findDataset(db, id);
  return dataset && canSee(user, dataset) ? dataset : undefined;
}

export interface IndexRecording {
  path: string;
  zarr: string;
  modalities: string[];
  groups: Array<{ name: string; rate: number; n_channels: number; n_samples: number; duration_s: number }>;
  n_events: number;
}

export interface ZarrIndex {
  stores: IndexRecording[];
  failures: Array<{ path: string; code: string; reason: string }>;
}

/** `<id>/zarr/index.json` (CONTRACT §4), or undefined when the dataset has no Zarr copy yet. */
export async function readZarrIndex(objects: ObjectStore, id: string): Promise<ZarrIndex | undefined> {
  const index = (await readJson(objects, `${id}/zarr/index.json`)) as Partial<ZarrIndex> | undefined;
  return index ? { stores: index.stores ?? [], failures: index.failures ?? [] } : undefined;
}

/** Zarr metadata documents of one store, by key inside the store (`zarr.json`, `eeg_256hz/0/zarr.json`). */
export type StoreMetadata = Record<string, unknown>;

/**
 * The metadata the viewer needs before its first frame of `group`: the root, the group, its level 0 and
 * view levels, and the events. Embedded in the page, it saves the browser a chain of round trips; two
 * rounds of small parallel reads here. Undefined when anything is missing (the viewer then fetches).
 */
export async function readStoreMetadata(objects: ObjectStore, id: string, zarr: string, group: string): Promise<StoreMetadata | undefined> {
  const base = `${id}/zarr/${zarr}/`;
  const read = async (keys: string[]) => {
    const docs = await Promise.all(keys.map((k) => readJson(objects, base + k)));
    return docs.every((d) => d !== undefined) ? Object.fromEntries(keys.map((k, i) => [k, docs[i]])) : undefined;
  };
  try {
    const first = await read(['zarr.json', `${group}/zarr.json`, `${group}/0/zarr.json`, 'events/zarr.json']);
    if (!first) return undefined;
    const attrs = (doc: unknown) => ((doc as { attributes?: Record<string, unknown> }).attributes ?? {});
    const levels = Number(attrs(first[`${group}/zarr.json`])['n_view_levels'] ?? 0);
    const eventArrays = Number(attrs(first['events/zarr.json'])['n_events'] ?? 0) > 0 ? ['onset', 'duration', 'code'] : [];
    const second = await read([
      ...Array.from({ length: Math.min(levels, 16) }, (_, i) => `${group}/view/${i + 1}/zarr.json`),
      ...eventArrays.map((name) => `events/${name}/zarr.json`),
    ]);
    return second && { ...first, ...second };
  } catch {
    return undefined;
  }
}

async function readJson(objects: ObjectStore, key: string): Promise<unknown> {
  const object = await objects.get(key);
  if (!object) return undefined;
  const parts: Buffer[] = [];
  for await (const part of object.body) parts.push(part as Buffer);
  try {
    return JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
