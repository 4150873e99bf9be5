/**
 * Why a dataset's last conversion failed as a whole (its source refused or unreachable), in words its owner
 * can act on; null unless `zarr_status` is `failed`.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('datasets').addColumn('zarr_error', 'text').execute();
}
