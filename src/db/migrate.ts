/**
 * Migrations, for rolling upgrades (docs/operating.md, "Upgrades"). Every migration expands the schema (adds
 * tables, columns, indexes), so a process of the previous release keeps running, and restarts, against a
 * database a newer release has migrated: the migrations it does not know are taken as done. A migration that
 * shrinks the schema (drops or renames what older code reads) ships in a later release than the code that stopped
 * reading it, and adds a row to `schema_requirements`; a process that does not know such a migration refuses
 * the database, naming the release it needs.
 */
import { Migrator, sql, type Kysely, type Migration, type MigrationResultSet } from 'kysely';
import { NDS_VERSION } from '../core/release.js';
import { migrations } from './migrations/index.js';

/** Applies every pending migration; throws with the failing migration's name on error. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  let { error, results } = await migrateOnce(db);
  // A newer release migrated between our reading of the done migrations and our taking of the lock.
  if (isMissingMigration(error)) ({ error, results } = await migrateOnce(db));
  const failed = results?.find((r) => r.status === 'Error');
  if (error) {
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String((error as Error).message ?? error)}`, { cause: error });
  }
  await assertReadable(db);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Throws when the database lacks a migration (a process that must not migrate, such as `nds gateway`), or needs a newer release. */
export async function assertMigrated(db: Kysely<any>): Promise<void> {
  const all = await knownAndNewer(db);
  const migrator = new Migrator({ db, provider: { getMigrations: async () => all } });
  const pending = (await migrator.getMigrations()).filter((m) => m.executedAt === undefined);
  if (pending.length > 0) {
    throw new Error(`the database needs ${pending.length} migration(s) (${pending[0]!.name} first): run \`nds migrate\` or start \`nds serve\` once`);
  }
  await assertReadable(db);
}

/**
 * One run of the migrator. The done migrations are read before it starts: it asks its provider while it
 * holds the migration lock in a transaction, and on PGlite (one connection) a query from there would wait for ever.
 */
async function migrateOnce(db: Kysely<any>): Promise<MigrationResultSet> {
  const all = await knownAndNewer(db);
  return new Migrator({ db, provider: { getMigrations: async () => all } }).migrateToLatest();
}

function isMissingMigration(error: unknown): boolean {
  return error instanceof Error && /corrupted migrations/.test(error.message);
}

/**
 * This release's migrations, and one that does nothing for each migration a newer release applied: Kysely
 * would otherwise call the database corrupted ("previously executed migration ... is missing") and the
 * process of the previous release would stop at its first restart during a rolling deploy.
 */
async function knownAndNewer(db: Kysely<any>): Promise<Record<string, Migration>> {
  const all: Record<string, Migration> = { ...migrations };
  for (const name of await executedMigrations(db)) all[name] ??= { up: async () => {} };
  return all;
}

async function executedMigrations(db: Kysely<any>): Promise<string[]> {
  if (!(await tableExists(db, 'kysely_migration'))) return [];
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return rows.map((r) => r.name);
}

/** Refuses a schema a newer release has contracted beyond what this release reads. */
async function assertReadable(db: Kysely<any>): Promise<void> {
  if (!(await tableExists(db, 'schema_requirements'))) return;
  const { rows } = await sql<{ migration: string; release: string; reason: string }>`select migration, release, reason from schema_requirements order by migration`.execute(db);
  const unknown = rows.find((r) => !(r.migration in migrations));
  if (unknown) {
    throw new Error(
      `this database's schema needs nds ${unknown.release} or later: its migration ${unknown.migration} (${unknown.reason}) is unknown to this release (${NDS_VERSION}); run nds ${unknown.release} or later`,
    );
  }
}

async function tableExists(db: Kysely<any>, name: string): Promise<boolean> {
  const { rows } = await sql<{ found: string | null }>`select to_regclass(${name})::text as found`.execute(db);
  return rows[0]?.found !== null && rows[0]?.found !== undefined;
}
