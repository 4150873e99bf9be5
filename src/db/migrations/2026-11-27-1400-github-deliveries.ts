/**
 * GitHub deliveries already taken (`/webhooks/github`), so that a replay dispatches nothing: each is known by
 * its body's SHA-256 and by its `X-GitHub-Delivery` id (which GitHub does not sign), pruned past the retention.
 */
import { type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('github_deliveries')
    .addColumn('body_sha256', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.unique())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('github_deliveries_received_at').on('github_deliveries').column('received_at').execute();
}
