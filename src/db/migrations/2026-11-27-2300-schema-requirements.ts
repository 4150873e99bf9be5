/**
 * What a process must know to read the schema (rolling upgrades, docs/operating.md). A process of an older
 * release runs on against migrations it does not know (they only add: expand), unless one of them is listed
 * here: a contract migration (one that drops or renames what older code reads) adds its own row, naming
 * the first release that no longer needs what it removed, and older processes then refuse to start, saying so.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('schema_requirements')
    .addColumn('migration', 'text', (c) => c.primaryKey())
    .addColumn('release', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .execute();
}
