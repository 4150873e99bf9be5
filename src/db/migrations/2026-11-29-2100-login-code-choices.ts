/**
 * What a mailed sign-in code carries besides its hash: the username asked for with it (set on the pending account
 * that the code verifies, so whoever holds the address chooses its name), and whether it is the code of the
 * sign-up that set the account's password (the only code whose verification keeps that password). Decision 0061.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('login_codes')
    .addColumn('username', 'text')
    .addColumn('keeps_password', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}
