/**
 * Holding a dataset's row exclusively (an approval, a takedown, a deletion) must not deadlock with a write of a
 * row that references the dataset. Such a write checks its foreign key with a `FOR KEY SHARE` lock on the
 * dataset's row; a hold taken `FOR UPDATE` blocked that check, and when the holder's own statements then waited
 * for the referencing row (the visibility trigger writes `copy_exposures`, the row a worker's `takeCopyLease`
 * had just inserted), PostgreSQL found a deadlock and failed one of them: under CI, the approval answered 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';
import { holdDatasetRow } from '../../src/datasets/dataset-queries.js';
import { takeCopyLease } from '../../src/conversion/copy-exposure-queries.js';

describe('an exclusive hold of a dataset row and a write referencing it', { skip: usingPostgres ? false : 'needs PostgreSQL (NDS_TEST_DB=postgres): PGlite runs one transaction at a time' }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.close());

  it("lets a worker take a copy's lease while an approval holds the row and makes the dataset public", async () => {
    const owner = await createAccount(server);
    const id = 'nd000501';
    await insertDatasetRows(server.deps.db, { id, name: 'held', owner_id: owner.user.id, visibility: 'private' });
    const db = server.deps.db;
    const now = new Date();
    let leaseTaken: Promise<boolean | undefined> | undefined;
    await db.transaction().execute(async (trx) => {
      await holdDatasetRow(trx, id, 'exclusive');
      // A worker takes the copy's lease (no copy_exposures row yet) while the row is held.
      leaseTaken = takeCopyLease(db, id, 'worker-1', now, new Date(now.getTime() + 30_000));
      // Until its insert has either finished or is waiting on a lock, the order below is not the one that deadlocked.
      for (let settled = false; !settled; ) {
        const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%copy_exposures%'`.execute(db);
        settled = waiting.rows[0]!.n > 0 || (await Promise.race([leaseTaken.then(() => true), new Promise<boolean>((r) => setImmediate(() => r(false)))]));
      }
      // The approval's own write: the visibility trigger wants a sweep in copy_exposures.
      await trx.updateTable('datasets').set({ visibility: 'public' }).where('id', '=', id).execute();
    });
    assert.equal(await leaseTaken, true, 'the worker took the lease');
    const row = await db.selectFrom('copy_exposures').select(['lease_holder', 'want_seq']).where('dataset_id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { lease_holder: 'worker-1', want_seq: 1 });
    assert.equal((await db.selectFrom('datasets').select('visibility').where('id', '=', id).executeTakeFirstOrThrow()).visibility, 'public');
  });
});
