/**
 * Rate-limit windows shared by every process of a service (decision 0017): one row per limiter and key
 * (`<limiter>:<sha256 of the key>`), its points and the end of its fixed window in ms since the epoch.
 * Windows that ended are deleted by their owner, `db/rate-limit-store.ts`.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('points', 'integer', (c) => c.notNull())
    .addColumn('reset_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_limits_reset_at').on('rate_limits').column('reset_at').execute();
}
