/**
 * A push's delivery that found the copy of `main` already puts the dataset back from `pending` to `ready`,
 * unless a conversion waits: also when that conversion is dispatched between the check and the write. The
 * dispatch enqueues, then sets `pending`; the settling holds the dataset row's lock across its check and write.
 *
 * The interleaving is made for real on PostgreSQL: a second connection holds the row's lock while the settling
 * starts, a job is enqueued meanwhile, and only then is the lock released. (Embedded PGlite has one connection:
 * a second transaction cannot hold a lock beside it, so there is no interleaving to test there.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { settlePendingUnlessQueued } from '../../src/conversion/worker.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';

const COMMIT = 'a'.repeat(40);

describe('a stale delivery settling its dataset back to ready', { skip: usingPostgres ? false : 'needs two database connections (PostgreSQL)' }, () => {
  let server: TestServer;
  let ownerId: number;
  let n = 0;

  before(async () => {
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    ownerId = (await createAccount(server)).user.id;
  });
  after(() => server?.close());

  async function pendingDataset(): Promise<string> {
    const id = `nd9${String(++n).padStart(5, '0')}`;
    await insertDatasetRows(server.deps.db, { id, name: `settle-${id}`, owner_id: ownerId, zarr_status: 'pending', zarr_source_commit: COMMIT });
    return id;
  }
  const status = async (id: string) => (await server.deps.db.selectFrom('datasets').select('zarr_status').where('id', '=', id).executeTakeFirstOrThrow()).zarr_status;

  it('settles to ready when nothing waits', async () => {
    const id = await pendingDataset();
    await settlePendingUnlessQueued(server.deps.db, id, server.clock.now());
    assert.equal(await status(id), 'ready');
  });

  it('leaves pending when a conversion is dispatched while it waits for the row', async () => {
    const id = await pendingDataset();
    const other = new pg.Client({ connectionString: server.config.databaseUrl });
    await other.connect();
    try {
      await other.query('begin');
      await other.query('select id from datasets where id = $1 for no key update', [id]);
      const settling = settlePendingUnlessQueued(server.deps.db, id, server.clock.now());
      // The settling is under way, waiting for the row (a backend of this database waits on a lock).
      for (let waited = 0; ; waited += 20) {
        const { rows } = await other.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
        if (rows[0].n > 0) break;
        assert.ok(waited < 5000, 'the settling never waited for the row');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // A dispatch: the job is enqueued (committed; its key-share lock on the row does not wait for an update).
      await enqueueConversion(server.deps.db, { datasetId: id, ref: COMMIT, full: false, reason: 'push' });
      await other.query('commit');
      await settling;
      assert.equal(await status(id), 'pending', 'a conversion waits: the dataset stays pending');
    } finally {
      await other.end();
    }
  });

  it('does nothing for a dataset that is gone', async () => {
    await settlePendingUnlessQueued(server.deps.db, 'nd999999', server.clock.now());
  });
});
