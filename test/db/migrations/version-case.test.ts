/**
 * The migration that makes version numbers one whatever their case (src/db/migrations/2026-11-29-1900-version-case.ts):
 * it upgrades a database that holds such pairs already (they stay, as cited versions must), and from then on a
 * pair differing only in case is refused by the database itself.
 */
import assert from 'node:assert/strict';
import { Migrator, sql } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { connectDatabase, type DatabaseHandle } from '../../../src/db/connect.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { migrations } from '../../../src/db/migrations/index.js';
import { isUniqueViolation } from '../../../src/db/sql-errors.js';

describe('migration: version numbers ignore case', () => {
  let database: DatabaseHandle;
  before(async () => {
    database = await connectDatabase('pglite:memory');
  });
  after(async () => database?.close());

  it('keeps the pairs made before it, and refuses new ones', async () => {
    const { db } = database;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    assert.equal((await migrator.migrateTo('2026-11-29-1710-sessions-by-user')).error, undefined);
    await sql`insert into users (username, email, status, tier, role, kind) values ('case-owner', 'case@example.org', 'approved', 'basic', 'member', 'person')`.execute(db);
    const owner = (await sql<{ id: number }>`select id from users where username = 'case-owner'`.execute(db)).rows[0]!.id;
    const version = (id: string, v: string) =>
      sql`insert into dataset_versions (dataset_id, version, manifest_sha256, file_count, size_bytes) values (${id}, ${v}, 'x', 0, 0)`.execute(db);
    for (const id of ['nd000001', 'nd000002']) await sql`insert into datasets (id, name, owner_id, visibility) values (${id}, ${id}, ${owner}, 'private')`.execute(db);
    await version('nd000001', '1.0.0-RC.1');
    await version('nd000001', '1.0.0-rc.1');

    await migrateToLatest(db);

    const kept = await sql<{ version: string }>`select version from dataset_versions where dataset_id = 'nd000001' order by version`.execute(db);
    assert.deepEqual(kept.rows.map((r) => r.version), ['1.0.0-RC.1', '1.0.0-rc.1']);
    await version('nd000002', '2.0.0-beta');
    await assert.rejects(version('nd000002', '2.0.0-BETA'), (err) => isUniqueViolation(err));
    await assert.rejects(version('nd000001', '1.1.0-a').then(() => version('nd000001', '1.1.0-A')), (err) => isUniqueViolation(err));
  });
});
