/**
 * Starts the real nds server on a free port for end-to-end tests, on a fresh database:
 * embedded PGlite (from a cached, migrated template: no initdb per test) or, when `NDS_TEST_DB=postgres`
 * and `TEST_DATABASE_URL` are set, a new database on the PostgreSQL server, dropped at close.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ManualClock } from '../../src/core/clock.js';
import { loadConfig, type Config } from '../../src/core/config.js';
import { pgliteExtensions } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createLogger } from '../../src/core/log.js';
import { startServer, type RunningServer } from '../../src/server.js';

export interface TestServer extends RunningServer {
  clock: ManualClock;
  config: Config;
  dataDir: string;
}

export interface TestServerOptions {
  /** Extra settings, as environment variables. */
  env?: Record<string, string>;
  /** Where the server's JSON logs go (default: stdout, at NDS_TEST_LOG_LEVEL or silent). */
  logDestination?: NodeJS.WritableStream;
}

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/db/migrations');

export const usingPostgres = process.env.NDS_TEST_DB === 'postgres' && !!process.env.TEST_DATABASE_URL;

/** A port that was free a moment ago (the server needs to know its own URL before it listens). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function migrationsHash(): string {
  const h = createHash('sha256');
  // The template also depends on PGlite's version and its extensions: the dependencies in package.json.
  h.update(readFileSync(path.join(migrationsDir, '../../../package.json')));
  for (const f of readdirSync(migrationsDir).sort()) h.update(f).update(readFileSync(path.join(migrationsDir, f)));
  return h.digest('hex').slice(0, 16);
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'nds-test-'));
  let databaseUrl = 'pglite:memory';
  let dropDatabase: (() => Promise<void>) | undefined;
  // A DATABASE_URL given is another server's database, shared (two nodes of one service): it is not made here.
  if (usingPostgres && options.env?.['DATABASE_URL'] === undefined) ({ url: databaseUrl, drop: dropDatabase } = await createPostgresTestDatabase());
  const clock = new ManualClock();
  const dump = usingPostgres ? undefined : await pgliteDump();
  // The port was free a moment ago; another test process may have taken it since: then another one.
  let config: Config;
  let server: RunningServer;
  for (let attempt = 1; ; attempt++) {
    config = loadConfig({
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: process.env.NDS_TEST_LOG_LEVEL ?? 'silent',
      ...options.env,
    });
    try {
      server = await startServer({ config, clock, hostname: '127.0.0.1', log: createLogger(config.logLevel, options.logDestination), pgliteDump: dump });
      break;
    } catch (err) {
      if (attempt >= 5 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  return {
    ...server,
    url: config.publicUrl,
    clock,
    config,
    dataDir,
    async close() {
      await server.close();
      // The drop runs on while the test goes on (its open connection keeps the process up until it is done).
      dropDatabase?.().catch((err) => console.error(`dropping the test database failed: ${err}`));
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface PostgresTestDatabase {
  /** The new database's URL (on the server of TEST_DATABASE_URL). */
  url: string;
  /** Drops it. The process stays up until the drop is done, but the caller need not wait for it. */
  drop(): Promise<void>;
}

let templateReady: Promise<string> | undefined;

/**
 * A fresh, migrated database on the PostgreSQL server of TEST_DATABASE_URL: a copy of a template database
 * migrated once for these migrations (`create database ... template ...`, a file copy), not migrated again.
 */
export async function createPostgresTestDatabase(): Promise<PostgresTestDatabase> {
  const admin = process.env.TEST_DATABASE_URL!;
  templateReady ??= migratedTemplate(admin);
  const template = await templateReady;
  const name = `nds_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(admin, `create database ${name} template ${template}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    url: url.toString(),
    drop() {
      dropped ??= adminQuery(admin, `drop database if exists ${name} with (force)`).then(() => {});
      return dropped;
    },
  };
}

async function adminQuery(admin: string, text: string, values?: unknown[]): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/**
 * The template database for the current migrations (named by their hash), made once per server: the first
 * process to need it builds it under a lock, migrates it, and only then gives it its final name, so that a
 * template found by name is always complete. The name also says whether the server offered pgvector when it
 * was built: the migrations create the extension only where it is installed, so a template made before the
 * package was installed must not stand in for one made after.
 */
async function migratedTemplate(admin: string): Promise<string> {
  const vector = ((await adminQuery(admin, "select 1 from pg_available_extensions where name = 'vector'")).rowCount ?? 0) > 0;
  const name = `nds_tpl_${migrationsHash()}_${vector ? 'vector' : 'novector'}`;
  const exists = async () => ((await adminQuery(admin, 'select 1 from pg_database where datname = $1', [name])).rowCount ?? 0) > 0;
  if (await exists()) return name;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    // One builder at a time, across the test processes that start together.
    await client.query('select pg_advisory_lock(hashtext($1))', [name]);
    if (await exists()) return name;
    const building = `${name}_build`;
    await client.query(`drop database if exists ${building} with (force)`);
    await client.query(`create database ${building}`);
    const url = new URL(admin);
    url.pathname = `/${building}`;
    const { Kysely, PostgresDialect } = await import('kysely');
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url.toString(), max: 1 }) }) });
    try {
      await migrateToLatest(db);
    } finally {
      await db.destroy();
    }
    await client.query(`alter database ${building} rename to ${name}`);
    return name;
  } finally {
    await client.end(); // ends the session, and with it the advisory lock
  }
}

/** A migrated PGlite data directory (cached as a tarball by migrations hash): a fresh database without initdb. */
export async function pgliteDump(): Promise<Blob> {
  const file = path.join(os.tmpdir(), `nds-pglite-template-${migrationsHash()}.tar`);
  if (existsSync(file)) return new Blob([await readFile(file)]);
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const { Kysely, PostgresDialect } = await import('kysely');
  const lite = await PGlite.create({ extensions: await pgliteExtensions() });
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool(createPgConfig(lite)) }) });
  await migrateToLatest(db);
  await db.destroy();
  const dump = await lite.dumpDataDir('none');
  await lite.close();
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, Buffer.from(await dump.arrayBuffer()));
  await rename(tmp, file);
  return dump;
}
