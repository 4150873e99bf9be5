/**
 * Opens the database: embedded PostgreSQL (PGlite, WebAssembly, in a folder or in memory) or a
 * PostgreSQL server. This is the only file where the two engines differ: both are driven through
 * node-postgres (`pg.Pool`), so SQL, migrations and queries are the same everywhere.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './types.js';

// int8 (count(*), bigint sums) as JS numbers on both engines: sizes stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface DatabaseHandle {
  db: Kysely<Database>;
  engine: 'pglite' | 'postgres';
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** A PGlite data directory dump (tarball) to start from instead of running initdb; tests use it. */
  pgliteDump?: Blob;
  /** Size of the pg pool for a PostgreSQL server; PGlite always has one connection. */
  poolSize?: number;
  /**
   * Told when an idle pooled connection fails (the server restarted, or terminated it). The pool replaces
   * the connection; without a listener, node-postgres would crash the process instead.
   */
  onIdleConnectionError?: (err: Error) => void;
}

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
    const lite = await PGlite.create({
      extensions: await pgliteExtensions(),
      ...(inMemory ? {} : { dataDir: where }),
      ...(options.pgliteDump ? { loadDataDir: options.pgliteDump } : {}),
    });
    const pool = new pg.Pool(createPgConfig(lite));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      db,
      engine: 'pglite',
      async close() {
        await db.destroy();
        await lite.close();
        unlock();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
  pool.on('error', (err) => options.onIdleConnectionError?.(err));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, engine: 'postgres', close: () => db.destroy() };
}

/** Extensions every embedded database loads: pgvector, for semantic search (as on a server that has it). */
export async function pgliteExtensions() {
  const { vector } = await import('@electric-sql/pglite-pgvector');
  return { vector };
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
