/**
 * A takedown closes its dataset's pending publication request: the request is denied, with a reason saying so,
 * in the takedown's transaction, so that an approval running meanwhile finds it decided and publishes nothing.
 */
import type { Kysely } from 'kysely';
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { Database } from '../db/types.js';
import { settleDeniedPublication } from './dataset-queries.js';

export const TAKEDOWN_REASON = 'An administrator made the dataset private while this request was pending.';

/** Denies the dataset's pending request, if any; call it under the dataset's row lock, in the takedown's transaction. */
export async function closePendingPublication(trx: Kysely<Database>, actor: Actor, datasetId: string, now: Date): Promise<void> {
  const closed = await trx
    .updateTable('publication_requests')
    .set({ status: 'denied', decided_by: actor.user.id, decided_at: now, reason: TAKEDOWN_REASON })
    .where('dataset_id', '=', datasetId)
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  if (closed.length === 0) return;
  await settleDeniedPublication(trx, datasetId);
  for (const { id } of closed) await audit(trx, actor, 'publication.close', datasetId, { request_id: id, reason: TAKEDOWN_REASON });
}
