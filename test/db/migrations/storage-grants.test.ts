/**
 * The migration that starts the storage ledger (src/db/migrations/2026-11-29-0900-storage-grants.ts): datasets
 * from before it count their latest version's size, so an account that held 9 GiB then is not let in for 10 more.
 */
import assert from 'node:assert/strict';
import { Migrator } from 'kysely';
import { after, before, describe, it } from 'node:test';
import { connectDatabase, type DatabaseHandle } from '../../../src/db/connect.js';
import { migrateToLatest } from '../../../src/db/migrate.js';
import { migrations } from '../../../src/db/migrations/index.js';
import { createUser, findUserById } from '../../../src/accounts/users.js';
import { storageUseOf } from '../../../src/datasets/storage-quota.js';
import { loadConfig } from '../../../src/core/config.js';

describe('migration: the storage ledger', () => {
  let database: DatabaseHandle;
  before(async () => {
    database = await connectDatabase('pglite:memory');
  });
  after(async () => database?.close());

  it("counts each dataset's latest version under the key `versions`, and nothing for a dataset without one", async () => {
    const db = database.db;
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    assert.equal((await migrator.migrateTo('2026-11-27-2320-catalogue-search-indexes')).error, undefined);
    const owner = await createUser(db, { username: 'ledger-owner', email: 'ledger@example.org', status: 'verified', role: 'member', kind: 'person' }, new Date());
    const rows: Array<[string, number, boolean]> = [
      ['nd000001', 7_000_000_000, false],
      ['sb000002', 2_000_000_000, true],
      ['sb000003', 0, true],
    ];
    for (const [id, size_bytes, sandbox] of rows) {
      await db.insertInto('datasets').values({ id, name: id, owner_id: owner.id, visibility: 'private', size_bytes, sandbox } as never).execute();
    }
    await migrateToLatest(db);
    const grants = await db.selectFrom('storage_grants').select(['dataset_id', 'object_key', 'bytes', 'confirmed']).orderBy('dataset_id').execute();
    assert.deepEqual(grants, [
      { dataset_id: 'nd000001', object_key: 'versions', bytes: 7_000_000_000, confirmed: true },
      { dataset_id: 'sb000002', object_key: 'versions', bytes: 2_000_000_000, confirmed: true },
    ]);
    const use = await storageUseOf({ db, config: loadConfig({}), clock: { now: () => new Date() } }, (await findUserById(db, owner.id))!);
    assert.deepEqual(use, { used_bytes: 9_000_000_000, quota_bytes: null, sandbox: { used_bytes: 2_000_000_000, quota_bytes: 10 * 2 ** 30 } });
  });
});
