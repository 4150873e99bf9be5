/**
 * Opens the database: embedded PostgreSQL (PGlite, WebAssembly, in a folder or in memory) or a
 * PostgreSQL server. This is the only file where the two engines differ: both are driven through
 * node-postgres (`pg.Pool`), so SQL, migrations and queries are the same everywhere.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  DefaultQueryExecutor,
  Kysely,
  PostgresDialect,
  PostgresDriver,
  type CompiledQuery,
  type DatabaseConnection,
  type PostgresDialectConfig,
  type QueryResult,
  type RootOperationNode,
  type TransactionSettings,
} from 'kysely';
import pg from 'pg';
import { RetryingConnectionProvider } from './retrying-connection-provider.js';
import type { Database } from './types.js';

// int8 (count(*), bigint sums) as JS numbers on both engines: sizes stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface DatabaseHandle {
  db: Kysely<Database>;
  engine: 'pglite' | 'postgres';
  /** The connection pool as it is now, for the metrics (PGlite: one connection, lent to one query at a time). */
  poolUse(): PoolUse;
  /**
   * Calls `listener` after each transaction of `db.transaction()` commits in which a statement matched `when`
   * (every transaction when left out). A cache cleared by each write statement (`accounts/key-cache.ts`) needs
   * it too: a write inside a transaction becomes visible to other connections only at the commit, and a
   * look-up in between still reads, and would keep, the old row.
   */
  afterCommit(listener: () => void, when?: (query: RootOperationNode) => boolean): void;
  close(): Promise<void>;
}

export interface PoolUse {
  /** Connections lent to work now. */
  inUse: number;
  /** Open connections waiting for work. */
  idle: number;
  /** Work waiting for a connection (all are lent and the pool is at its bound). */
  waiting: number;
  /** The pool's bound (DATABASE_POOL_MAX). */
  max: number;
}

export interface ConnectOptions {
  /** A PGlite data directory dump (tarball) to start from instead of running initdb; tests use it. */
  pgliteDump?: Blob;
  /** Size of the pg pool for a PostgreSQL server (DATABASE_POOL_MAX); PGlite always has one connection. Default 10. */
  poolSize?: number;
  /**
   * Longest a statement may run on a PostgreSQL server, in ms (DATABASE_STATEMENT_TIMEOUT_MS), before the
   * server cancels it (answered 503, `connection-loss.ts`); 0 or left out: no limit. PGlite runs statements in
   * this process's own thread, which no timer interrupts: it has no limit.
   */
  statementTimeoutMs?: number;
  /**
   * Told once for each pooled connection that fails, idle or in use (the server restarted, an administrator
   * terminated it, the network cut it). The pool replaces the connection either way; left out, nothing is told.
   */
  onConnectionError?: (err: Error) => void;
}

/**
 * Settings of the embedded PostgreSQL. Its buffer cache lives in the WebAssembly memory, which grows to the
 * most ever used and never shrinks: with initdb's 128 MB of shared buffers an idle `nds serve` held 350-380 MiB.
 * 16 MB keeps the catalogue's working set (the page cache of the data folder holds the rest) and the
 * process under 300 MiB (decision 0014).
 */
const pgliteSettings = ['-c', 'shared_buffers=16MB'];

/** How long a query waits for a pooled connection (a server that does not answer, or a pool all in use). */
const CONNECT_TIMEOUT_MS = 10_000;

export async function connectDatabase(url: string, options: ConnectOptions = {}): Promise<DatabaseHandle> {
  if (url.startsWith('pglite:')) {
    const { PGlite } = await import('@electric-sql/pglite');
    const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
    const where = url.slice('pglite:'.length);
    const inMemory = where === '' || where === 'memory' || where === 'memory://';
    let unlock = () => {};
    if (!inMemory) {
      mkdirSync(where, { recursive: true });
      unlock = lockDataDir(where);
    }
    const startParams = [...PGlite.defaultStartParams, ...pgliteSettings];
    if (!inMemory && !options.pgliteDump && !existsSync(path.join(where, 'PG_VERSION'))) {
      // A new database: initdb grows the WebAssembly memory to ≈ 450 MiB, which never shrinks. Closing that
      // instance and opening the folder again leaves the server with what serving needs (≈ 250 MiB).
      await (await PGlite.create({ dataDir: where, startParams })).close();
    }
    const lite = await PGlite.create({
      extensions: await pgliteExtensions(),
      ...(inMemory ? {} : { dataDir: where }),
      ...(options.pgliteDump ? { loadDataDir: options.pgliteDump } : {}),
      startParams,
    });
    const pool = new pg.Pool(createPgConfig(lite));
    const commits = new Set<CommitListener>();
    const db = new Kysely<Database>({ dialect: new CommitTellingDialect({ pool }, commits) });
    return {
      db,
      engine: 'pglite',
      poolUse: () => poolUseOf(pool),
      afterCommit: (tell, when) => void commits.add({ tell, when }),
      async close() {
        await db.destroy();
        await lite.close();
        unlock();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    // Sent when each connection starts: a session default, which `RESET statement_timeout` returns to.
    ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {}),
  });
  watchConnections(pool, options.onConnectionError ?? (() => {}));
  const commits = new Set<CommitListener>();
  const db = await retryingKysely(new CommitTellingDialect({ pool }, commits));
  return { db, engine: 'postgres', poolUse: () => poolUseOf(pool), afterCommit: (tell, when) => void commits.add({ tell, when }), close: () => db.destroy() };
}

interface CommitListener {
  tell: () => void;
  when?: (query: RootOperationNode) => boolean;
}

/**
 * node-postgres through Kysely, telling `commits` after each transaction it commits (those with a `when`, only
 * when a statement of the transaction matched it). A transaction's statements are seen on its connection: for
 * the transaction's life, its `executeQuery` notes which listeners a statement matches.
 */
class CommitTellingDialect extends PostgresDialect {
  readonly #settings: PostgresDialectConfig;
  readonly #commits: ReadonlySet<CommitListener>;

  constructor(settings: PostgresDialectConfig, commits: ReadonlySet<CommitListener>) {
    super(settings);
    this.#settings = settings;
    this.#commits = commits;
  }

  override createDriver(): PostgresDriver {
    const commits = this.#commits;
    /** The listeners matched so far by each open transaction, by its connection. */
    const open = new Map<DatabaseConnection, { matched: Set<CommitListener>; executeQuery: DatabaseConnection['executeQuery'] }>();
    const end = (connection: DatabaseConnection) => {
      const watched = open.get(connection);
      open.delete(connection);
      if (watched) connection.executeQuery = watched.executeQuery;
      return watched?.matched;
    };
    return new (class extends PostgresDriver {
      override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
        // A transaction Kysely ended without a rollback (the server had aborted it) left its watch here.
        end(connection);
        const matched = new Set<CommitListener>();
        const executeQuery = connection.executeQuery;
        open.set(connection, { matched, executeQuery });
        connection.executeQuery = function <R>(this: DatabaseConnection, query: CompiledQuery): Promise<QueryResult<R>> {
          for (const listener of commits) if (listener.when && !matched.has(listener) && listener.when(query.query)) matched.add(listener);
          return executeQuery.call(this, query) as Promise<QueryResult<R>>;
        };
        try {
          await super.beginTransaction(connection, settings);
        } catch (err) {
          end(connection);
          throw err;
        }
      }

      override async commitTransaction(connection: DatabaseConnection): Promise<void> {
        try {
          await super.commitTransaction(connection);
        } finally {
          const matched = end(connection);
          for (const listener of commits) if (!listener.when || matched?.has(listener)) listener.tell();
        }
      }

      override async rollbackTransaction(connection: Parameters<PostgresDriver['rollbackTransaction']>[0]): Promise<void> {
        try {
          await super.rollbackTransaction(connection);
        } finally {
          end(connection);
        }
      }
    })(this.#settings);
  }
}

function poolUseOf(pool: pg.Pool): PoolUse {
  return { inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max };
}

/**
 * A `pg.Client` emits `'error'` when its connection dies; with no listener, Node ends the process. The pool
 * listens only to idle clients (it removes its listener from a client it lends), so every client gets a
 * listener of its own for its whole life, and the pool's own `'error'` (an idle client failed) is handled
 * there too. A dead client is dropped by the pool: idle at once, lent when it comes back.
 */
function watchConnections(pool: pg.Pool, onError: (err: Error) => void): void {
  const told = new WeakSet<pg.Client>();
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      // One death can arrive twice (the server's last message, then the closed socket): tell it once.
      if (told.has(client)) return;
      told.add(client);
      onError(err);
    });
  });
  pool.on('error', () => {});
}

/** Kysely on PostgreSQL, whose connections come through a `RetryingConnectionProvider` (work lost with its connection runs again once, when safe). */
async function retryingKysely(dialect: CommitTellingDialect): Promise<Kysely<Database>> {
  const driver = dialect.createDriver();
  await driver.init();
  const executor = new DefaultQueryExecutor(dialect.createQueryCompiler(), dialect.createAdapter(), new RetryingConnectionProvider(driver));
  return new Kysely<Database>({ config: { dialect }, dialect, driver, executor });
}

/**
 * Extensions every embedded database loads, as on a server that has them: pgvector, for semantic search, and
 * pg_trgm, for the catalogue's word search (decision 0023).
 */
export async function pgliteExtensions() {
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  return { vector, pg_trgm };
}

/**
 * PGlite is a single-process database: two processes on one data directory would corrupt it.
 * A lock file with the owner's pid keeps a second process out; a stale lock (dead pid) is taken over.
 */
function lockDataDir(dir: string): () => void {
  const file = path.join(dir, '.nds-lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8'));
      if (pid && pid !== process.pid && isAlive(pid)) {
        throw new Error(`the embedded database in ${dir} is in use by process ${pid} (a running nds serve?); stop it first, or use a PostgreSQL server (DATABASE_URL=postgres://...)`);
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`cannot lock the embedded database in ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
