/**
 * Rolling upgrades: a process of the previous release runs on, and restarts, against a database a newer
 * release has migrated, unless a newer migration contracts the schema beyond what it reads.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { assertMigrated, migrateToLatest } from '../../src/db/migrate.js';

describe('migrations across releases', () => {
  let database: DatabaseHandle;
  before(async () => {
    database = await connectDatabase('pglite:memory');
    await migrateToLatest(database.db);
  });
  after(() => database.close());

  it('accepts a database a newer release has migrated (expand): start, migrate and assert go on', async () => {
    // What a newer release leaves: a migration this release does not know, and what it added.
    await sql`alter table datasets add column future_field text`.execute(database.db);
    await sql`insert into kysely_migration (name, timestamp) values ('2099-01-01-0000-future-expand', now())`.execute(database.db);
    assert.deepEqual(await migrateToLatest(database.db), []);
    await assertMigrated(database.db);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from datasets`.execute(database.db);
    assert.equal(rows[0]!.n, 0);
  });

  it('refuses a schema a newer release contracted, naming the release it needs', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('2099-02-01-0000-drop-old-column', now())`.execute(database.db);
    await sql`insert into schema_requirements (migration, release, reason) values ('2099-02-01-0000-drop-old-column', '0.3.0', 'datasets.legacy dropped')`.execute(database.db);
    await assert.rejects(migrateToLatest(database.db), /needs nds 0\.3\.0 or later: its migration 2099-02-01-0000-drop-old-column \(datasets\.legacy dropped\) is unknown to this release \(0\.1\.0\)/);
    await assert.rejects(assertMigrated(database.db), /needs nds 0\.3\.0 or later/);
  });
});
