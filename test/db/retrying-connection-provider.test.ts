/**
 * Work lost with its database connection: run again once when that cannot apply anything twice, otherwise
 * answered 503 with Retry-After. A scripted driver stands in for the pool, so each case is exact.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompiledQuery, DefaultQueryExecutor, Kysely, PostgresDialect, sql, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { isNdsError } from '../../src/core/errors.js';
import { isConnectionLoss } from '../../src/db/connection-loss.js';
import { isReadOnly, RetryingConnectionProvider } from '../../src/db/retrying-connection-provider.js';

/** A backend terminated by an administrator, as node-postgres reports it. */
function terminated(): Error {
  return Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
}

/** A driver whose connections fail where `failOn` says: (connection number, statement text) → an error to throw. */
class ScriptedDriver implements Driver {
  /** Every statement sent, as `connection#: sql`. */
  readonly sent: string[] = [];
  acquired = 0;
  released = 0;
  constructor(private readonly failOn: (connection: number, text: string) => Error | undefined) {}
  async init() {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const n = ++this.acquired;
    const sent = this.sent;
    const failOn = this.failOn;
    return {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        const failure = failOn(n, query.sql);
        if (failure && failure.message.startsWith('Client has encountered')) throw failure;
        sent.push(`${n}: ${query.sql}`);
        if (failure) throw failure;
        return { rows: [{ n } as R] };
      },
      // eslint-disable-next-line require-yield
      async *streamQuery() {
        throw new Error('not used');
      },
    };
  }
  async beginTransaction(c: DatabaseConnection) {
    await c.executeQuery(CompiledQuery.raw('begin'));
  }
  async commitTransaction(c: DatabaseConnection) {
    await c.executeQuery(CompiledQuery.raw('commit'));
  }
  async rollbackTransaction(c: DatabaseConnection) {
    await c.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection() {
    this.released++;
  }
  async destroy() {}
}

function dbOn(driver: Driver): Kysely<Record<string, never>> {
  const dialect = new PostgresDialect({ pool: {} as never });
  const executor = new DefaultQueryExecutor(dialect.createQueryCompiler(), dialect.createAdapter(), new RetryingConnectionProvider(driver));
  return new Kysely({ config: { dialect }, dialect, driver, executor });
}

function assertUnavailable(err: unknown): true {
  assert.ok(isNdsError(err, 'service_unavailable'), `expected service_unavailable, got ${String(err)}`);
  assert.equal(err.status, 503);
  assert.match(err.headers['Retry-After'] ?? '', /^\d+$/);
  return true;
}

describe('RetryingConnectionProvider', () => {
  it('runs a read that lost its connection once more, on a fresh connection', async () => {
    const driver = new ScriptedDriver((n) => (n === 1 ? terminated() : undefined));
    const { rows } = await sql<{ n: number }>`select 1`.execute(dbOn(driver));
    assert.deepEqual(rows, [{ n: 2 }]);
    assert.deepEqual(driver.sent, ['1: select 1', '2: select 1']);
    assert.equal(driver.released, 2);
  });

  it('answers 503 with Retry-After when the read fails again', async () => {
    const driver = new ScriptedDriver(() => terminated());
    await assert.rejects(sql`select 1`.execute(dbOn(driver)), assertUnavailable);
    assert.equal(driver.sent.length, 2, 'retried once, not more');
  });

  it('never repeats a write made outside a transaction: it may have been applied', async () => {
    const driver = new ScriptedDriver((n) => (n === 1 ? terminated() : undefined));
    await assert.rejects(sql`update t set x = 1`.execute(dbOn(driver)), assertUnavailable);
    assert.deepEqual(driver.sent, ['1: update t set x = 1']);
  });

  it('repeats a write that pg refused before sending it (the connection was already dead)', async () => {
    const dead = new Error('Client has encountered a connection error and is not queryable');
    const driver = new ScriptedDriver((n) => (n === 1 ? dead : undefined));
    await sql`update t set x = 1`.execute(dbOn(driver));
    assert.deepEqual(driver.sent, ['2: update t set x = 1']);
  });

  it('runs a transaction whose connection died before commit again from the start', async () => {
    const driver = new ScriptedDriver((n, text) => (n === 1 && text.startsWith('update') ? terminated() : undefined));
    let runs = 0;
    const result = await dbOn(driver)
      .transaction()
      .execute(async (trx) => {
        runs++;
        await sql`insert into t values (1)`.execute(trx);
        await sql`update t set x = 2`.execute(trx);
        return 'done';
      });
    assert.equal(result, 'done');
    assert.equal(runs, 2);
    // The dead connection is not asked to roll back (the server did); the second run commits.
    assert.deepEqual(driver.sent, ['1: begin', '1: insert into t values (1)', '1: update t set x = 2', '2: begin', '2: insert into t values (1)', '2: update t set x = 2', '2: commit']);
  });

  it('does not repeat a transaction that lost its connection during commit: it may have committed', async () => {
    const driver = new ScriptedDriver((n, text) => (text === 'commit' ? terminated() : undefined));
    let runs = 0;
    await assert.rejects(
      dbOn(driver)
        .transaction()
        .execute(async (trx) => {
          runs++;
          await sql`insert into t values (1)`.execute(trx);
        }),
      assertUnavailable,
    );
    assert.equal(runs, 1);
  });

  it('judges the connection, not the error the work turned it into', async () => {
    const driver = new ScriptedDriver((n, text) => (n === 1 && text === 'select 1' ? terminated() : undefined));
    let runs = 0;
    await dbOn(driver)
      .transaction()
      .execute(async (trx) => {
        runs++;
        try {
          await sql`select 1`.execute(trx);
        } catch {
          throw new Error('a service wrapped the failure');
        }
      });
    assert.equal(runs, 2);
  });

  it('leaves errors of the work itself alone', async () => {
    const unique = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    const driver = new ScriptedDriver(() => unique);
    await assert.rejects(sql`select 1`.execute(dbOn(driver)), (err) => err === unique);
    assert.equal(driver.sent.length, 1);
  });

  it('answers 503 when no connection can be made, trying once more after a refused one', async () => {
    let tries = 0;
    const driver = new ScriptedDriver(() => undefined);
    driver.acquireConnection = async () => {
      tries++;
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    };
    await assert.rejects(sql`select 1`.execute(dbOn(driver)), assertUnavailable);
    assert.equal(tries, 2);
  });
});

describe('isReadOnly', () => {
  it('takes selects for reads and anything that may write for writes', () => {
    assert.equal(isReadOnly('select * from "datasets" where "id" = $1'), true);
    assert.equal(isReadOnly('  (select 1) union (select 2)'), true);
    assert.equal(isReadOnly('with x as (select 1) select * from x'), true);
    assert.equal(isReadOnly('select "updated_at" from "users"'), true);
    assert.equal(isReadOnly('with x as (update t set a = 1 returning *) select * from x'), false);
    assert.equal(isReadOnly('select * from t for update skip locked'), false);
    assert.equal(isReadOnly("select nextval('n')"), false);
    assert.equal(isReadOnly('insert into t values (1)'), false);
    assert.equal(isReadOnly('delete from t'), false);
  });
});

describe('isConnectionLoss', () => {
  it('recognises every way node-postgres reports a dead connection, and nothing else', () => {
    for (const code of ['57P01', '57P02', '57P03', '08006', '08003', 'ECONNRESET', 'ECONNREFUSED']) assert.equal(isConnectionLoss({ code, message: 'x' }), true, code);
    assert.equal(isConnectionLoss(new Error('Connection terminated unexpectedly')), true);
    assert.equal(isConnectionLoss(new Error('Client has encountered a connection error and is not queryable')), true);
    for (const code of ['23505', '40001', '42P01', '57014']) assert.equal(isConnectionLoss({ code, message: 'x' }), false, code);
    assert.equal(isConnectionLoss(new Error('syntax error')), false);
    assert.equal(isConnectionLoss(undefined), false);
  });
});
