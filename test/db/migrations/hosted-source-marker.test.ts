/**
 * The migration to the `hosted` marker (src/db/migrations/2026-11-27-1537-hosted-source-marker.ts): a dataset
 * whose `source_repo` held its own hosted repository's folder now holds the marker; a path naming another
 * dataset's repository, and every URL, stay as they were (the conversion refuses such a path with its reason).
 */
import assert from 'node:assert/strict';
import { Migrator } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { connectDatabase, type DatabaseHandle } from '../../../src/db/connect.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { migrations } from '../../../src/db/migrations/index.js';
import { createUser } from '../../../src/accounts/users.js';

describe('migration: the hosted repository marker', () => {
  let database: DatabaseHandle;
  before(async () => {
    database = await connectDatabase('pglite:memory');
  });
  after(async () => database?.close());

  it('turns a path ending in the row\'s own <id>.git into the marker, and leaves other values alone', async () => {
    const db = database.db;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    const { error } = await migrator.migrateTo('2026-11-24-2200-recordings');
    assert.equal(error, undefined);
    const owner = await createUser(db, { username: 'migration-owner', email: 'migration@example.org', status: 'approved', role: 'member', kind: 'person' }, new Date());
    const rows: Array<[string, string | null]> = [
      ['nd000001', '/var/lib/nds/git/nd000001.git'],
      ['nd000002', '/srv/elsewhere/git/nd000002.git'],
      ['nd000003', '/var/lib/nds/git/nd000001.git'],
      ['sb000004', '/var/lib/nds/git/sb000004.git'],
      ['nd000005', 'https://github.com/o/nd000005.git'],
      ['nd000006', null],
      ['nd000007', '/var/lib/nds/git/xnd000007.git'],
    ];
    for (const [id, source_repo] of rows) {
      await db.insertInto('datasets').values({ id, name: id, owner_id: owner.id, visibility: 'private', source_repo } as never).execute();
    }
    await migrateToLatest(db);
    const after = await db.selectFrom('datasets').select(['id', 'source_repo']).orderBy('id').execute();
    assert.deepEqual(Object.fromEntries(after.map((r) => [r.id, r.source_repo])), {
      nd000001: 'hosted',
      nd000002: 'hosted',
      nd000003: '/var/lib/nds/git/nd000001.git',
      sb000004: 'hosted',
      nd000005: 'https://github.com/o/nd000005.git',
      nd000006: null,
      nd000007: '/var/lib/nds/git/xnd000007.git',
    });
  });
});
