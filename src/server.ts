/**
 * Starts nds: opens the database (and migrates it), the object store and the mailer, builds the app and
 * listens. Used by `nds serve`, by the benchmarks, and by end-to-end tests (on port 0, a free port).
 */
import { serve, type ServerType } from '@hono/node-server';
import path from 'node:path';
import { KeyCache } from './accounts/key-cache.js';
import { createApp } from './app.js';
import { systemClock, type Clock } from './core/clock.js';
import type { Config } from './core/config.js';
import { connectDatabase, type DatabaseHandle } from './db/connect.js';
import { migrateToLatest } from './db/migrate.js';
import { emptyHooks, type Deps } from './deps.js';
import { createLogger, type Logger } from './core/log.js';
import { createMailer } from './mail/mailer.js';
import { openObjectStore } from './objects/open-object-store.js';
import { startWorker, type RunningWorker } from './conversion/worker.js';
import { searchFieldsRefresher } from './datasets/search-fields.js';
import { edgePurger } from './gateway/edge-purge.js';
import { closeGateway } from './gateway/gateway.js';

export interface StartOptions {
  config: Config;
  /** Time source; tests pass a `ManualClock`. */
  clock?: Clock;
  log?: Logger;
  /** A PGlite data directory dump to start from (tests: skips initdb). */
  pgliteDump?: Blob;
  /** Listen address; defaults to all interfaces. */
  hostname?: string;
}

export interface RunningServer {
  url: string;
  port: number;
  deps: Deps;
  database: DatabaseHandle;
  /** The in-process conversion worker, when this process runs one. */
  worker: RunningWorker | undefined;
  /** Stops accepting connections, lets in-flight requests finish, then closes the database and store. */
  close(): Promise<void>;
}

/** Opens every dependency named by the configuration; the caller closes them. */
export async function openDeps(options: StartOptions): Promise<{ deps: Deps; database: DatabaseHandle }> {
  const { config } = options;
  const log = options.log ?? createLogger(config.logLevel);
  const database = await connectDatabase(config.databaseUrl, {
    pgliteDump: options.pgliteDump,
    onIdleConnectionError: (err) => log.warn({ err }, 'an idle database connection failed; the pool replaces it'),
  });
  await migrateToLatest(database.db);
  const objects = await openObjectStore(config.objectStoreUrl, config);
  const mailer = await createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, outboxDir: path.join(config.dataDir, 'outbox'), log });
  const keyCache = new KeyCache(config.apiKeyCacheMs);
  const deps: Deps = {
    config,
    db: database.db.withPlugin(keyCache.invalidationPlugin()),
    dbEngine: database.engine,
    objects,
    log,
    clock: options.clock ?? systemClock,
    mailer,
    keyCache,
    hooks: emptyHooks(),
  };
  // Every process that may finish a conversion (serve, worker) purges the CDN's stale metadata (CONTRACT §6.4).
  deps.hooks.zarrChanged.push(edgePurger({ config, log }));
  // A new Zarr copy brings new recording facts (rates, channel counts, tasks) for search.
  deps.hooks.zarrChanged.push(searchFieldsRefresher(deps));
  return { deps, database };
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { deps, database } = await openDeps(options);
  const app = createApp(deps);
  let worker: RunningWorker | undefined;
  if (options.config.conversionDispatch === 'local' && options.config.inProcessWorker) {
    const w = startWorker(deps);
    deps.hooks.jobQueued.push(() => w.wake());
    worker = w;
  }
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, port: options.config.port, hostname: options.hostname }, () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.config.port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://localhost:${port}`,
    port,
    deps,
    database,
    worker,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            // In-flight requests had their chance; drop idle and stuck connections.
            (server as import('node:http').Server).closeAllConnections?.();
          }, 5000);
          server.close(() => {
            clearTimeout(timer);
            resolve();
          });
          (server as import('node:http').Server).closeIdleConnections?.();
        });
        await worker?.stop();
        await deps.mailer.close();
        await closeGateway(deps);
        await deps.objects.close();
        await database.close();
      })();
      return closing;
    },
  };
}
