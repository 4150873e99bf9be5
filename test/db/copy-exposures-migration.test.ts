/**
 * Upgrading to the tagged public base (decision 0016): the migration wants a whole sweep of every converted
 * public copy (it carries no tags yet) and an `index.json` settle of every converted private one (its
 * `data_base` was public); copies never converted want nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Migrator, sql } from 'kysely';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { createPostgresTestDatabase, usingPostgres } from '../support/test-server.js';

describe('the copy_exposures migration', () => {
  let database: DatabaseHandle;
  let drop: () => Promise<void> = async () => {};

  before(async () => {
    let url = 'pglite:memory';
    if (usingPostgres) {
      // An empty database of its own (the test template is migrated already).
      const admin = new URL(process.env.TEST_DATABASE_URL!);
      const name = `nds_mig_${process.pid}_${Date.now()}`;
      const root = await connectDatabase(admin.toString());
      await sql.raw(`create database ${name}`).execute(root.db);
      await root.close();
      admin.pathname = `/${name}`;
      url = admin.toString();
      drop = async () => {
        const again = await connectDatabase(process.env.TEST_DATABASE_URL!);
        await sql.raw(`drop database if exists ${name} with (force)`).execute(again.db);
        await again.close();
      };
    }
    database = await connectDatabase(url);
    const before = Object.keys(migrations).filter((name) => name < '2026-11-27-1630-copy-exposures').at(-1)!;
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    const { error } = await migrator.migrateTo(before);
    assert.equal(error, undefined);
  });
  after(async () => {
    await database?.close();
    await drop();
  });

  it('wants a whole sweep of converted public copies, an index.json settle of converted private ones', async () => {
    const { db } = database;
    await sql`insert into users (username, email, status, tier, role, kind) values ('old-owner', 'old@example.org', 'approved', 'basic', 'member', 'person')`.execute(db);
    const owner = (await sql<{ id: number }>`select id from users where username = 'old-owner'`.execute(db)).rows[0]!.id;
    for (const [id, visibility, zarr] of [['nd000001', 'public', 'ready'], ['nd000002', 'private', 'ready'], ['sb000003', 'private', 'failed'], ['nd000004', 'public', null]] as const) {
      await sql`insert into datasets (id, name, owner_id, visibility, sandbox, zarr_status) values (${id}, ${id}, ${owner}, ${visibility}, ${id.startsWith('sb')}, ${zarr})`.execute(db);
    }
    await migrateToLatest(db);
    const rows = (await sql<{ dataset_id: string; want_seq: number; done_seq: number; scope: string[] | null }>`
      select dataset_id, want_seq, done_seq, scope from copy_exposures order by dataset_id`.execute(db)).rows;
    assert.deepEqual(rows, [
      { dataset_id: 'nd000001', want_seq: 1, done_seq: 0, scope: null },
      { dataset_id: 'nd000002', want_seq: 1, done_seq: 0, scope: ['index.json'] },
      { dataset_id: 'sb000003', want_seq: 1, done_seq: 0, scope: ['index.json'] },
    ]);
  });
});
