/**
 * The GitHub deliveries already taken, so that a replayed delivery dispatches nothing (docs/security.md,
 * "Webhooks and one-time links"). The one owner of the `github_deliveries` table.
 *
 * A delivery is known by its body's SHA-256 and by its `X-GitHub-Delivery` id: GitHub signs the body but
 * not the id, so a replay under a fresh id is caught by the body. Both stay for `DELIVERY_RETENTION_MS`,
 * GitHub's own redelivery window; older rows are pruned by the next delivery.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';

/** Three days: the longest GitHub itself offers to redeliver a delivery. */
export const DELIVERY_RETENTION_MS = 3 * 86_400_000;

export interface DeliveryKey {
  /** SHA-256 (hex) of the body as signed. */
  bodySha256: string;
  /** `X-GitHub-Delivery`, when the request has one. */
  deliveryId: string | undefined;
}

/**
 * Claims a delivery: true the first time its body or its id is seen within the retention, false for a
 * replay. One statement settles it, so of concurrent copies of one delivery exactly one is claimed.
 */
export async function claimDelivery(db: Kysely<Database>, key: DeliveryKey, now: Date): Promise<boolean> {
  await db.deleteFrom('github_deliveries').where('received_at', '<', new Date(now.getTime() - DELIVERY_RETENTION_MS)).execute();
  const claimed = await db
    .insertInto('github_deliveries')
    .values({ body_sha256: key.bodySha256, delivery_id: key.deliveryId ?? null, received_at: now })
    .onConflict((oc) => oc.doNothing())
    .returning('body_sha256')
    .executeTakeFirst();
  return claimed !== undefined;
}

/** Forgets a claimed delivery whose handling failed, so that GitHub's redelivery of it is taken. */
export async function releaseDelivery(db: Kysely<Database>, key: DeliveryKey): Promise<void> {
  await db.deleteFrom('github_deliveries').where('body_sha256', '=', key.bodySha256).execute();
}
