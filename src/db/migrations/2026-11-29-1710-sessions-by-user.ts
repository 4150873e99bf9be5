/**
 * Sessions looked up by their account: a sign-in deletes its account's expired sessions and those past the
 * newest 50 (`accounts/sessions.ts`), and revoking an account or verifying a pending one ends all of them.
 * Without this index each of those scanned every session of every account.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('sessions_user_id_created_at').on('sessions').columns(['user_id', 'created_at']).execute();
}
