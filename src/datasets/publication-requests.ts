/** Publication requests with the people they name, and the address an account is mailed at: read by the requests' views and mails. */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';

/** Requests with the asker's username and address and the decider's username. */
export function requestsWithPeople(db: Kysely<Database>) {
  return db
    .selectFrom('publication_requests as r')
    .leftJoin('users as rq', 'rq.id', 'r.requested_by')
    .leftJoin('users as dc', 'dc.id', 'r.decided_by')
    .selectAll('r')
    .select(['rq.username as requested_by_username', 'rq.email as requested_by_email', 'dc.username as decided_by_username']);
}

/** The address of an account, `undefined` for none (the owner of a dataset deleted meanwhile). */
export async function addressOf(db: Kysely<Database>, userId: number | undefined): Promise<string | undefined> {
  if (userId === undefined) return undefined;
  return (await db.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst())?.email;
}
