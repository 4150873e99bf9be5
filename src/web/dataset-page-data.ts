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
  const object = await objects.get(`${id}/zarr/index.json`);
  if (!object) return undefined;
  const parts: Buffer[] = [];
  for await (const part of object.body) parts.push(part as Buffer);
  try {
    const index = JSON.parse(Buffer.concat(parts).toString('utf8')) as Partial<ZarrIndex>;
    return { stores: index.stores ?? [], failures: index.failures ?? [] };
  } catch {
    return undefined;
  }
}
