/**
 * Gives Kysely its connections from the pool and, when a connection dies under the work, runs the work once
 * more on a fresh connection if that cannot apply anything twice; otherwise the work fails with
 * `databaseUnavailable` (503, Retry-After). Kysely hands every query, and every transaction from `begin` to
 * `commit`, to its connection provider as one function of a connection: wrapping that function is the one
 * place where "this work may be run again" is known, for every caller at once.
 *
 * Safe to run again: work that sent only reads, and a transaction that died before its `commit` was sent
 * (the server rolled it back). Not safe: a write outside a transaction, or a transaction whose `commit` was
 * sent (it may have committed before the connection died). Work outside the database done inside a
 * transaction's callback runs again too, so such callbacks must stay idempotent.
 */
import type { CompiledQuery, ConnectionProvider, DatabaseConnection, Driver, QueryResult } from 'kysely';
import { databaseUnavailable, isConnectionLoss, isStatementTimeout, statementTimedOut } from './connection-loss.js';

/**
 * Connections usually die together (a server restart, every backend terminated): the pool drops each as its
 * socket reports it. A short pause before the second try lets it, so the second try gets a live connection
 * (measured: 20–50 of ~700 requests answered 503 under repeated terminations without it, 2–4 with it).
 */
const RETRY_PAUSE_MS = 25;

export class RetryingConnectionProvider implements ConnectionProvider {
  readonly #driver: Driver;

  constructor(driver: Driver) {
    this.#driver = driver;
  }

  async provideConnection<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    try {
      return await this.#attempt(consumer);
    } catch (err) {
      // A statement the server cancelled at DATABASE_STATEMENT_TIMEOUT_MS is not run again: the database is busy.
      if (isStatementTimeout(err)) throw statementTimedOut(err);
      if (!(err instanceof LostConnection)) throw err;
      if (!err.repeatable) throw databaseUnavailable(err.cause);
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    try {
      return await this.#attempt(consumer);
    } catch (err) {
      if (isStatementTimeout(err)) throw statementTimedOut(err);
      throw err instanceof LostConnection ? databaseUnavailable(err.cause) : err;
    }
  }

  async #attempt<T>(consumer: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    let connection: DatabaseConnection;
    try {
      connection = await this.#driver.acquireConnection();
    } catch (err) {
      // Nothing ran. Whatever kept the connection from being made (refused, too many connections, the
      // database not accepting any), the work cannot be done now; it is tried again only after a lost
      // connection, and not after the pool waited its whole connection timeout.
      throw new LostConnection(err, isConnectionLoss(err) && !String((err as Error)?.message).startsWith('timeout exceeded'));
    }
    const tracked = new TrackedConnection(connection);
    try {
      return await consumer(tracked);
    } catch (err) {
      // The work may have turned the connection's error into one of its own: the connection decides.
      if (tracked.lost !== undefined) throw new LostConnection(tracked.lost, tracked.repeatable);
      throw err;
    } finally {
      // A backend's last words (57P01) reach the query before its socket closes: one turn lets pg see the
      // close, so the pool drops the client instead of lending it again.
      if (tracked.lost !== undefined) await new Promise((resolve) => setImmediate(resolve));
      await this.#driver.releaseConnection(connection);
    }
  }
}

/** Work whose connection died; `repeatable` when running it again cannot apply anything twice. */
class LostConnection extends Error {
  readonly repeatable: boolean;
  constructor(cause: unknown, repeatable: boolean) {
    super('the database connection was lost', { cause });
    this.repeatable = repeatable;
  }
}

/** A connection that remembers what was sent on it, so a loss can be judged safe to repeat or not. */
class TrackedConnection implements DatabaseConnection {
  readonly #inner: DatabaseConnection;
  #inTransaction = false;
  /** A write outside a transaction, or a `commit`, was sent: running the work again could apply it twice. */
  #unrepeatable = false;
  /** The error that showed the connection dead; undefined while it lives. */
  lost: unknown;

  constructor(inner: DatabaseConnection) {
    this.#inner = inner;
  }

  get repeatable(): boolean {
    return !this.#unrepeatable;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const verb = firstWord(query.sql);
    // The server rolled the transaction back when the connection died; a `rollback` on it would only fail.
    if (this.lost !== undefined && verb === 'rollback') return { rows: [] };
    const before = this.#unrepeatable;
    this.#note(verb, query.sql);
    try {
      const result = await this.#inner.executeQuery<R>(query);
      if (verb === 'commit' || verb === 'rollback') this.#inTransaction = false;
      return result;
    } catch (err) {
      if (isConnectionLoss(err)) {
        this.lost ??= err;
        // pg refused the query before sending it: nothing of it ran.
        if (notSent(err)) this.#unrepeatable = before;
      }
      throw err;
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    this.#note(firstWord(query.sql), query.sql);
    try {
      yield* this.#inner.streamQuery<R>(query, chunkSize);
    } catch (err) {
      if (isConnectionLoss(err)) this.lost ??= err;
      throw err;
    }
  }

  #note(verb: string, text: string): void {
    if (verb === 'begin' || verb === 'start') this.#inTransaction = true;
    else if (verb === 'commit') this.#unrepeatable = true;
    else if (!this.#inTransaction && !isReadOnly(text)) this.#unrepeatable = true;
  }
}

function firstWord(text: string): string {
  return /^\s*\(?\s*([a-z]+)/i.exec(text)?.[1]?.toLowerCase() ?? '';
}

/**
 * A statement that changes nothing: a `select` (or `with … select`) naming no writing verb. Errs on the side
 * of "writes": `select … for update` and a `with` holding an `update` count as writes, so are never repeated.
 */
export function isReadOnly(text: string): boolean {
  const verb = firstWord(text);
  return (verb === 'select' || verb === 'with') && !/\b(insert|update|delete|merge|nextval|setval)\b/i.test(text);
}

function notSent(err: unknown): boolean {
  return (err as Error).message?.startsWith('Client has encountered a connection error and is not queryable') ?? false;
}
