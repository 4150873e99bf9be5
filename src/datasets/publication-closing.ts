/**
 * A takedown (an administrator makes a public dataset private) and publication: its pending request is denied,
 * with a reason saying so, in the takedown's transaction, so that an approval running meanwhile finds it decided
 * and publishes nothing; once that committed, the owner and the one who asked for the closed request are mailed.
 */
import type { Kysely } from 'kysely';
import type { Actor } from '../accounts/admin-users.js';
import { audit } from '../accounts/admin-users.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { notify } from '../mail/mailer.js';
import { findDataset } from './dataset-access.js';
import { settleDeniedPublication } from './dataset-queries.js';
import { requestClosedMail, takenDownMail, type RequestFacts } from './publication-mails.js';
import { addressOf, requestsWithPeople } from './publication-requests.js';

export const TAKEDOWN_REASON = 'An administrator made the dataset private while this request was pending.';

/** The reason a closed request carries: the administrator's own words after the fixed sentence, when they gave any. */
export function takedownReason(reason: string | undefined): string {
  return reason ? `${TAKEDOWN_REASON} Their reason: ${reason}` : TAKEDOWN_REASON;
}

/**
 * Denies the dataset's pending request, if any, and answers the ids of the requests it closed (none or one);
 * call it under the dataset's row lock, in the takedown's transaction.
 */
export async function closePendingPublication(trx: Kysely<Database>, actor: Actor, datasetId: string, now: Date, reason?: string): Promise<number[]> {
  const closedReason = takedownReason(reason);
  const closed = await trx
    .updateTable('publication_requests')
    .set({ status: 'denied', decided_by: actor.user.id, decided_at: now, reason: closedReason })
    .where('dataset_id', '=', datasetId)
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  if (closed.length === 0) return [];
  await settleDeniedPublication(trx, datasetId);
  for (const { id } of closed) await audit(trx, actor, 'publication.close', datasetId, { request_id: id, reason: closedReason });
  return closed.map((r) => r.id);
}

/**
 * Tells the owner that an administrator made their dataset private, with the administrator's reason when they
 * gave one, and whoever asked for a request the takedown closed; each once, and never the administrator who did
 * it. Call it after the takedown committed; never throws (a mail that cannot go out is logged: the takedown stands).
 */
export async function announceTakedown(deps: Pick<Deps, 'db' | 'config' | 'mailer' | 'log'>, actor: Actor, datasetId: string, closed: readonly number[], reason?: string): Promise<void> {
  try {
    const d = await findDataset(deps.db, datasetId);
    if (!d) return;
    const owner = await addressOf(deps.db, d.owner_id);
    const requests: RequestFacts[] = closed.length
      ? (await requestsWithPeople(deps.db).where('r.id', 'in', [...closed]).orderBy('r.id').execute()).map((r) => ({ ...r, dataset_name: d.name }))
      : [];
    const told = new Set([actor.user.email.toLowerCase()]);
    const mails = [];
    if (owner && !told.has(owner.toLowerCase())) {
      told.add(owner.toLowerCase());
      mails.push(takenDownMail(deps.config.publicUrl, owner, d, requests[0], reason));
    }
    for (const r of requests) {
      if (!r.requested_by_email || told.has(r.requested_by_email.toLowerCase())) continue;
      told.add(r.requested_by_email.toLowerCase());
      mails.push(requestClosedMail(deps.config.publicUrl, r.requested_by_email, r, reason));
    }
    await notify(deps, mails);
  } catch (err) {
    deps.log.warn({ err, dataset: datasetId }, 'the mails of a takedown could not be sent');
  }
}
