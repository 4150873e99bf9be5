/** What the dataset pages show: datasets the viewer may see, and a dataset's Zarr `index.json`. */
import type { Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import { allows, findDatasetAndStanding, type Standing } from '../datasets/dataset-access.js';
import { listRecentVisibleDatasets, type Dataset } from '../datasets/dataset-queries.js';
import type { StoreIndex } from '../formats/zarr/store-index.js';
import { readStoreIndex } from '../formats/zarr/store-index-object.js';
import type { ObjectStore } from '../objects/object-store.js';

/** Public datasets and the user's own, newest first (at most `limit`). */
export function listPageDatasets(db: Kysely<Database>, user: User | undefined, limit = 200): Promise<Dataset[]> {
  return listRecentVisibleDatasets(db, user?.id, limit);
}

/** The dataset and the viewer's standing when `user` may see it; undefined otherwise (the page answers 404 either way). */
export async function findPageDataset(db: Kysely<Database>, id: string, user: User | undefined): Promise<{ dataset: Dataset; standing: Standing } | undefined> {
  // Found with the caller's standing in one statement: a private id costs what an unknown one does.
  const { dataset, standing } = await findDatasetAndStanding(db, id, user);
  return dataset && allows(standing, 'read') ? { dataset, standing } : undefined;
}

/** `<id>/zarr/index.json` (docs/conversion.md), or undefined when the dataset has no Zarr copy yet or a damaged one. */
export async function readZarrIndex(objects: ObjectStore, id: string): Promise<StoreIndex | undefined> {
  try {
    return await readStoreIndex(objects, id);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** Zarr metadata documents of one store, by key inside the store (`zarr.json`, `eeg_256hz/0/zarr.json`). */
export type StoreDocuments = Record<string, unknown>;

/**
 * The metadata the viewer needs before its first frame of `group`: the root, the group, its level 0 and
 * view levels, and the events. Embedded in the page, it saves the browser a chain of round trips; two
 * rounds of small parallel reads here. Undefined when anything is missing (the viewer then fetches).
 */
export async function readStoreDocuments(objects: ObjectStore, id: string, zarr: string, group: string): Promise<StoreDocuments | undefined> {
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
  const bytes = await objects.readAll(key);
  if (!bytes) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
