import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { isNdsError } from '../../src/core/errors.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { usingPostgres } from '../support/test-server.js';

describe('DATABASE_STATEMENT_TIMEOUT_MS on a PostgreSQL server', { skip: usingPostgres ? false : 'needs PostgreSQL (NDS_TEST_DB=postgres)' }, () => {
  let database: DatabaseHandle;
  before(async () => {
    database = await connectDatabase(process.env.TEST_DATABASE_URL!, { statementTimeoutMs: 200, poolSize: 2 });
  });
  after(() => database.close());

  it('cancels a statement that runs too long, answered 503 with Retry-After, and the pool goes on serving', async () => {
    const started = Date.now();
    const err = await sql`select pg_sleep(5)`.execute(database.db).then(() => undefined, (e: unknown) => e);
    assert.ok(Date.now() - started < 4000, 'the statement was cancelled, not waited for');
    assert.ok(isNdsError(err, 'service_unavailable'), `a 503, not ${String(err)}`);
    assert.equal(err.status, 503);
    assert.equal(err.headers['Retry-After'], '5');
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    assert.equal(rows[0]!.one, 1);
  });

  it('reports the pool in use and waiting', async () => {
    const slow = [sql`select pg_sleep(0.1)`.execute(database.db), sql`select pg_sleep(0.1)`.execute(database.db), sql`select pg_sleep(0.1)`.execute(database.db)];
    await new Promise((resolve) => setTimeout(resolve, 30));
    const use = database.poolUse();
    await Promise.all(slow);
    assert.deepEqual([use.inUse, use.waiting, use.max], [2, 1, 2]);
  });
});
