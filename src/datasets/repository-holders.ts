/**
 * Which node holds a dataset's hosted git repository (`repository_holders`, decision 0026): the one owner of
 * the table. A node claims a repository when it creates it; the claim is one insert that only the first
 * node wins, so two nodes receiving a dataset's first push at once agree on one holder.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';

/** The NODE_URL of the node holding `datasetId`'s repository; undefined when no node holds one. */
export async function repositoryHolder(db: Kysely<Database>, datasetId: string): Promise<string | undefined> {
  const row = await db.selectFrom('repository_holders').select('node_url').where('dataset_id', '=', datasetId).executeTakeFirst();
  return row?.node_url;
}

/** Claims `datasetId`'s repository for `nodeUrl` unless a node holds it already; returns the holder either way. */
export async function claimRepository(db: Kysely<Database>, datasetId: string, nodeUrl: string, now: Date): Promise<string> {
  await db
    .insertInto('repository_holders')
    .values({ dataset_id: datasetId, node_url: nodeUrl, created_at: now })
    .onConflict((oc) => oc.column('dataset_id').doNothing())
    .execute();
  const holder = await repositoryHolder(db, datasetId);
  // The dataset was deleted between the insert and the read (its row cascades): nobody holds it.
  if (holder === undefined) throw new Error(`the repository of ${datasetId} could not be claimed: the dataset is gone`);
  return holder;
}
