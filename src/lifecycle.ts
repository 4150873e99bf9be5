/**
 * One lifecycle for every process of nds: `nds serve` (everything), `nds gateway` (reads the database and
 * the object store: no migrations, no mailer) and `nds worker` (the queue and the store). `openDeps` opens
 * what a process needs, `closeDeps` closes it in reverse order, whatever fails on the way; every hook
 * between domains, and every long-lived service of a process, is made here, in one place.
 */
import type { Server } from 'node:http';
import path from 'node:path';
import { KeyCache } from './accounts/key-cache.js';
import { createDeviceLimits } from './accounts/device-limits.js';
import { createSignInLimits } from './accounts/sign-in-limits.js';
import { startWorker, type RunningWorker } from './conversion/worker.js';
import { systemClock, type Clock } from './core/clock.js';
import type { Config } from './core/config.js';
import { createLogger, type Logger } from './core/log.js';
import { searchFieldsRefresher } from './datasets/search-fields.js';
import { vectorSimilarityOf } from './datasets/search-semantic.js';
import { connectDatabase, type DatabaseHandle } from './db/connect.js';
import { assertMigrated, migrateToLatest } from './db/migrate.js';
import { emptyHooks, type Deps } from './deps.js';
import { edgePurger } from './gateway/edge-purge.js';
import { createGateway, type Gateway } from './gateway/gateway.js';
import type { DropChannel } from './gateway/relayed-cache.js';
import type { ServerDeps } from './http/app-env.js';
import { createMailer, noMailer } from './mail/mailer.js';
import { openObjectStore } from './objects/open-object-store.js';

export interface OpenOptions {
  config: Config;
  /** Time source; tests pass a `ManualClock`. */
  clock?: Clock;
  log?: Logger;
  /** A PGlite data directory dump to start from (tests: skips initdb). */
  pgliteDump?: Blob;
}

/** What a process opens besides the database and the object store. */
export interface ProcessParts {
  /** Applies pending migrations first; a process without it refuses a database that needs them. */
  migrate: boolean;
  /** Opens the mailer; a process without one refuses to send. */
  mailer: boolean;
  /** Caches bearer-key look-ups, emptied by a plugin on `db` around every write to users or api_keys. */
  keyCache: boolean;
}

export const PROCESS_PARTS = {
  serve: { migrate: true, mailer: true, keyCache: true },
  gateway: { migrate: false, mailer: false, keyCache: false },
  worker: { migrate: true, mailer: false, keyCache: false },
} as const satisfies Record<string, ProcessParts>;

export interface OpenedDeps {
  deps: Deps;
  database: DatabaseHandle;
  keyCache: KeyCache | undefined;
  /** Closers, in the order their parts were opened; `closeDeps` runs them backwards. */
  readonly closers: Array<() => Promise<void> | void>;
}

export async function openDeps(options: OpenOptions, parts: ProcessParts): Promise<OpenedDeps> {
  const { config } = options;
  const log = options.log ?? createLogger(config.logLevel);
  const database = await connectDatabase(config.databaseUrl, {
    pgliteDump: options.pgliteDump,
    onConnectionError: (err) => log.warn({ err }, 'a database connection failed; the pool replaces it'),
  });
  const closers: OpenedDeps['closers'] = [() => database.close()];
  try {
    if (parts.migrate) await migrateToLatest(database.db);
    else await assertMigrated(database.db);
    const objects = await openObjectStore(config.objectStoreUrl, { ...config, clock: options.clock });
    closers.push(() => objects.close());
    const mailer = parts.mailer ? await createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, outboxDir: path.join(config.dataDir, 'outbox'), log }) : noMailer();
    closers.push(() => mailer.close());
    const keyCache = parts.keyCache ? new KeyCache(config.apiKeyCacheMs) : undefined;
    const deps: Deps = {
      config,
      db: keyCache ? database.db.withPlugin(keyCache.invalidationPlugin()) : database.db,
      dbEngine: database.engine,
      vectorSimilarity: await vectorSimilarityOf(database.db),
      objects,
      log,
      clock: options.clock ?? systemClock,
      mailer,
      hooks: emptyHooks(),
    };
    return { deps, database, keyCache, closers };
  } catch (err) {
    await closeDeps({ closers, log });
    throw err;
  }
}

/** Closes what `openDeps` and the process opened, newest first; a failure is logged and the rest still close. */
export async function closeDeps(opened: { closers: OpenedDeps['closers']; deps?: Deps; log?: Logger }): Promise<void> {
  const log = opened.deps?.log ?? opened.log;
  for (const close of opened.closers.splice(0).reverse()) {
    try {
      await close();
    } catch (err) {
      log?.warn({ err }, 'closing a part of the process failed');
    }
  }
}

/**
 * Processes that finish conversions (serve, worker): a new copy purges the CDN's stale metadata, and
 * brings new recording facts (rates, channel counts, tasks) for search.
 */
export function registerConversionHooks(deps: Deps): void {
  deps.hooks.zarrChanged.push(edgePurger({ config: deps.config, log: deps.log }));
  deps.hooks.zarrChanged.push(searchFieldsRefresher(deps));
}

/** The process's gateway: a dataset that goes private or away, and a conversion's stale metadata, are dropped at once. */
export function openGateway(opened: OpenedDeps, peers?: DropChannel): Gateway {
  const { deps } = opened;
  const gateway = createGateway(deps, peers);
  deps.hooks.datasetVisibilityChanged.push((id) => gateway.dropDataset(id));
  deps.hooks.zarrChanged.push((id, paths) => gateway.dropKeys(paths.map((p) => `${id}/zarr/${p}`)));
  opened.closers.push(() => gateway.close());
  return gateway;
}

/** An in-process conversion worker, woken by every job queued here and stopped (after its job) at close. */
export function openWorker(opened: OpenedDeps): RunningWorker {
  const worker = startWorker(opened.deps);
  opened.deps.hooks.jobQueued.push(() => worker.wake());
  opened.closers.push(() => worker.stop());
  return worker;
}

/** Everything `nds serve` runs on: the deps, the key cache, rate limits, the gateway, and the conversion hooks. */
export async function openServerDeps(options: OpenOptions): Promise<{ opened: OpenedDeps; deps: ServerDeps }> {
  const opened = await openDeps(options, PROCESS_PARTS.serve);
  const { deps, keyCache } = opened;
  registerConversionHooks(deps);
  const gateway = openGateway(opened);
  return {
    opened,
    deps: { ...deps, keyCache: keyCache!, signInLimits: createSignInLimits(deps.clock), deviceLimits: createDeviceLimits(deps.clock), gateway },
  };
}

/** `nds worker`: the queue's worker alone, with the hooks of a process that finishes conversions. */
export async function startWorkerProcess(options: OpenOptions): Promise<{ worker: RunningWorker; close(): Promise<void> }> {
  const opened = await openDeps(options, PROCESS_PARTS.worker);
  registerConversionHooks(opened.deps);
  const worker = openWorker(opened);
  return { worker, close: () => closeDeps(opened) };
}

/**
 * Stops an HTTP server gracefully: no new connections, idle ones closed now, in-flight requests given five
 * seconds to finish before their connections are dropped.
 */
export function closeHttpServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), 5000);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Resolves on the first SIGTERM or SIGINT. Later signals are absorbed while the shutdown runs, because a
 * second default-handled signal would kill the process mid-close (PGlite flushes its files on close);
 * a third Ctrl-C forces the exit.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let count = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      count++;
      if (count === 1) resolve(signal);
      else if (signal === 'SIGINT' && count >= 3) process.exit(130);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
