/**
 * One lifecycle for every process of nds: `nds serve` (everything), `nds gateway` (reads the database and
 * the object store: no migrations, no mailer) and `nds worker` (the queue and the store). `openDeps` opens
 * what a process needs, `closeDeps` closes it in reverse order, whatever fails on the way; every hook
 * between domains, and every long-lived service of a process, is made here, in one place.
 */
import { chmod, mkdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import path from 'node:path';
import { bootstrapOwner } from './accounts/bootstrap-owner.js';
import { KeyCache, writesWatchedTable } from './accounts/key-cache.js';
import { createDeviceLimits } from './accounts/device-limits.js';
import { createSignInLimits } from './accounts/sign-in-limits.js';
import { createDatasetLimits } from './datasets/dataset-limits.js';
import { OwnerSetup } from './accounts/owner-setup.js';
import { startSessionSweeper } from './accounts/sessions.js';
import { observeQueue } from './conversion/conversion-metrics.js';
import { startCopySweeper, sweepCopy } from './conversion/copy-exposure.js';
import { startUploadSweeper } from './datasets/multipart-uploads.js';
import { startWorker, type RunningWorker } from './conversion/worker.js';
import { QUEUE_CHANNEL } from './conversion/job-queue.js';
import { removeMirrorIfDeleted, startMirrorSweeper } from './conversion/source-mirrors.js';
import { DATASET_DELETED_CHANNEL } from './datasets/delete-dataset.js';
import { systemClock, type Clock } from './core/clock.js';
import type { Config } from './core/config.js';
import { FallbackLimitStore } from './core/fallback-limit-store.js';
import { RateLimits } from './core/rate-limiter.js';
import { createLogger, type Logger, type ProcessKind } from './core/log.js';
import { Metrics } from './core/metrics.js';
import { currentRequest } from './core/request-context.js';
import { observeRequests } from './http/request-observer.js';
import { healthOf, readinessOf } from './routes/health-routes.js';
import { removeDeletedRepositories } from './datasets/hosted-repository.js';
import { measureUnrecordedRepositories } from './datasets/storage-quota.js';
import { searchFieldsRefresher } from './datasets/search-fields.js';
import { backfillCatalogue } from './recordings/catalogue-sync.js';
import { createRecordingCaches } from './recordings/recording-caches.js';
import { vectorSimilarityOf } from './datasets/search-semantic.js';
import { startEmbeddingRefresher } from './datasets/search-embeddings.js';
import { connectDatabase, type DatabaseHandle, type PoolUse } from './db/connect.js';
import { listenTo } from './db/notifications.js';
import { assertMigrated, migrateToLatest } from './db/migrate.js';
import { DatabaseLimitStore } from './db/rate-limit-store.js';
import { emptyHooks, type Deps } from './deps.js';
import { edgePurger } from './gateway/edge-purge.js';
import { createGateway, type Gateway } from './gateway/gateway.js';
import type { DropChannel } from './gateway/relayed-cache.js';
import { VisibilityGate } from './gateway/visibility-gate.js';
import type { ServerDeps } from './http/app-env.js';
import { createMailer, noMailer } from './mail/mailer.js';
import { openObjectStore } from './objects/open-object-store.js';
import { createMcpLimits } from './mcp/mcp-limits.js';
import { createCatalogueLimits } from './http/catalogue-limits.js';
import { FetchSlots } from './git/fetch-slots.js';

export interface OpenOptions {
  config: Config;
  /** Which program this is (the log's `kind`, the database pool's default bound); default `serve`. */
  kind?: ProcessKind;
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

/** Connections a process holds at most when DATABASE_POOL_MAX is unset; a gateway process reads little (visibility, cached). */
const DEFAULT_POOL_MAX = { serve: 10, worker: 10, gateway: 3, cli: 2 } as const satisfies Record<ProcessKind, number>;

export async function openDeps(options: OpenOptions, parts: ProcessParts): Promise<OpenedDeps> {
  const { config } = options;
  const kind = options.kind ?? 'serve';
  const log = options.log ?? createLogger(config.logLevel, undefined, kind);
  const database = await connectDatabase(config.databaseUrl, {
    pgliteDump: options.pgliteDump,
    poolSize: config.databasePoolMax ?? DEFAULT_POOL_MAX[kind],
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    onConnectionError: (err) => log.warn({ err }, 'a database connection failed; the pool replaces it'),
  });
  const closers: OpenedDeps['closers'] = [() => database.close()];
  try {
    if (parts.migrate) await migrateWithoutTimeout(config.databaseUrl, database);
    else await assertMigrated(database.db);
    const metrics = new Metrics();
    observeDatabase(metrics, database);
    const objects = await openObjectStore(config.objectStoreUrl, { ...config, clock: options.clock });
    closers.push(() => objects.close());
    const mailer = parts.mailer ? await createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, outboxDir: path.join(config.dataDir, 'outbox'), log }) : noMailer();
    closers.push(() => mailer.close());
    const keyCache = parts.keyCache ? new KeyCache(config.apiKeyCacheMs) : undefined;
    // A key revoked inside a transaction: emptied again once it is visible to every connection.
    if (keyCache) database.afterCommit(() => keyCache.clear(), writesWatchedTable);
    const deps: Deps = {
      config,
      db: keyCache ? database.db.withPlugin(keyCache.invalidationPlugin()) : database.db,
      dbEngine: database.engine,
      vectorSimilarity: await vectorSimilarityOf(database.db),
      objects,
      log,
      metrics,
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

/**
 * Applies pending migrations. On a PostgreSQL server they run on a connection of their own, without the
 * statement timeout: building an index on a large table may take minutes, and waiting for another process's
 * migration lock too.
 */
async function migrateWithoutTimeout(url: string, database: DatabaseHandle): Promise<void> {
  if (database.engine === 'pglite') return void (await migrateToLatest(database.db));
  const migrating = await connectDatabase(url, { poolSize: 1 });
  try {
    await migrateToLatest(migrating.db);
  } finally {
    await migrating.close();
  }
}

/** The database pool's use, read at each scrape. */
function observeDatabase(metrics: Metrics, database: DatabaseHandle): void {
  const use = (pick: (u: PoolUse) => number) => () => [{ value: pick(database.poolUse()) }];
  metrics.gauge('nds_db_pool_connections_in_use', 'Database connections lent to work now', use((u) => u.inUse));
  metrics.gauge('nds_db_pool_connections_idle', 'Open database connections waiting for work', use((u) => u.idle));
  metrics.gauge('nds_db_pool_waiting', 'Work waiting for a database connection (the pool is at its bound)', use((u) => u.waiting));
  metrics.gauge('nds_db_pool_max', 'The bound of the database pool (DATABASE_POOL_MAX)', use((u) => u.max));
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
  deps.metrics.gauge('nds_gateway_cache_bytes', 'Bytes of the objects the gateway cache holds in this process', () => [{ value: gateway.cache.bytes }]);
  if (gateway.cache.sharedCircuit !== undefined) deps.metrics.circuit('gateway_cache_redis', () => gateway.cache.sharedCircuit !== 'closed');
  deps.hooks.datasetVisibilityChanged.push((id) => gateway.dropDataset(id));
  deps.hooks.zarrChanged.push((id, paths) => gateway.dropKeys(paths.map((p) => `${id}/zarr/${p}`)));
  opened.closers.push(() => gateway.close());
  return gateway;
}

/** How often a worker looks for mirrors of sources whose dataset was deleted without its hearing of it. */
const MIRROR_SWEEPER_INTERVAL_MS = 3600_000;

/**
 * An in-process conversion worker, woken by every job queued here and, on PostgreSQL, by every job or task
 * queued anywhere (`LISTEN`); stopped (after its work in hand) at close. Its mirrors of dataset sources go with
 * their dataset: at once for a deletion in this process, on PostgreSQL for one announced by any, and at start
 * and every hour for those it did not hear of (`conversion/source-mirrors.ts`).
 */
export function openWorker(opened: OpenedDeps): RunningWorker {
  const { deps } = opened;
  const listenOn = (channel: string, what: string) =>
    deps.dbEngine === 'postgres'
      ? (notified: () => void) => listenTo(deps.config.databaseUrl, channel, notified, (err) => deps.log.warn({ err }, `the ${what} listener lost its connection; polling meanwhile`))
      : undefined;
  const mirrors = startMirrorSweeper(deps, { intervalMs: MIRROR_SWEEPER_INTERVAL_MS, listen: listenOn(DATASET_DELETED_CHANNEL, 'deleted datasets') });
  opened.closers.push(() => mirrors.stop());
  deps.hooks.datasetVisibilityChanged.push((id) => removeMirrorIfDeleted(deps, id));
  const worker = startWorker(deps, { listen: listenOn(QUEUE_CHANNEL, 'queue') });
  opened.deps.hooks.jobQueued.push(() => worker.wake());
  opened.closers.push(() => worker.stop());
  return worker;
}

/**
 * The process's rate-limit service (decision 0017): counts in Redis when `RATE_LIMIT_REDIS_URL` is set, else
 * in the database, so every process of the service shares them; this process's memory stands in while that
 * store is down. Later limits (anonymous catalogue requests, tool calls) are named limiters of the same service.
 */
export async function openRateLimits(opened: OpenedDeps): Promise<RateLimits> {
  const { config, clock, log } = opened.deps;
  const redisUrl = config.rateLimitRedisUrl;
  const shared = redisUrl ? new (await import('./core/redis-limit-store.js')).RedisLimitStore({ url: redisUrl }) : new DatabaseLimitStore(opened.database.db);
  const store = new FallbackLimitStore(shared, { log, what: redisUrl ? 'Redis' : 'the database', now: () => clock.now().getTime() });
  opened.deps.metrics.circuit(redisUrl ? 'rate_limits_redis' : 'rate_limits_database', () => store.degraded);
  const limits = new RateLimits(store, clock);
  opened.closers.push(() => limits.close());
  return limits;
}

/** How long `/objects/` remembers that a dataset is public (another process's change is seen after this). */
const OBJECT_VISIBILITY_TTL_MS = 1000;
/** How long a visibility change waits for another process's sweep of the same copy to finish. */
const COPY_SWEEP_WAIT_MS = 10 * 60_000;
/** How often `nds serve` aborts multipart uploads older than UPLOAD_STALE_AFTER_S. */
const UPLOAD_SWEEPER_INTERVAL_MS = 3600_000;
/** How often `nds serve` deletes expired browser sessions (a sign-in deletes its own account's at once). */
const SESSION_SWEEPER_INTERVAL_MS = 3600_000;
/** How often `nds serve` looks for copy sweeps that a crash or a failure left undone. */
const COPY_SWEEPER_INTERVAL_MS = 30_000;

/** Everything `nds serve` runs on: the deps, the key cache, rate limits, the gateway, the read side's caches, and the conversion hooks. */
export async function openServerDeps(options: OpenOptions): Promise<{ opened: OpenedDeps; deps: ServerDeps }> {
  const opened = await openDeps(options, PROCESS_PARTS.serve);
  const { deps, keyCache } = opened;
  registerConversionHooks(deps);
  observeQueue(deps.metrics, deps.db, deps.clock);
  // A dataset made private is refused by /objects here at once, then its copy is closed at the store's
  // public base (the change answers only then), then the gateway drops what it cached; published, the same.
  // The origin: a dataset made private through another process is closed here within a second.
  const objectVisibility = new VisibilityGate(deps.db, () => deps.clock.now().getTime(), OBJECT_VISIBILITY_TTL_MS);
  deps.hooks.datasetVisibilityChanged.push((id) => objectVisibility.forget(id));
  // The read side looks a dataset's recordings up again at once when it goes private or away, or is converted anew.
  const recordingCaches = createRecordingCaches(deps);
  deps.hooks.datasetVisibilityChanged.push((id) => recordingCaches.storeLookups.forgetDataset(id));
  deps.hooks.zarrChanged.push((id) => recordingCaches.storeLookups.forgetDataset(id));
  deps.hooks.datasetMembersChanged.push((id) => recordingCaches.storeLookups.forgetDataset(id));
  deps.hooks.datasetVisibilityChanged.push((id) => sweepCopy(deps, id, { waitMs: COPY_SWEEP_WAIT_MS }));
  const sweeper = startCopySweeper(deps, COPY_SWEEPER_INTERVAL_MS);
  opened.closers.push(() => sweeper.stop());
  const uploadSweeper = startUploadSweeper(deps, UPLOAD_SWEEPER_INTERVAL_MS);
  opened.closers.push(() => uploadSweeper.stop());
  const sessionSweeper = startSessionSweeper(deps, SESSION_SWEEPER_INTERVAL_MS);
  opened.closers.push(() => sessionSweeper.stop());
  const gateway = openGateway(opened);
  const rateLimits = await openRateLimits(opened);
  if (deps.config.embeddingsUrl) {
    const embeddings = startEmbeddingRefresher(deps, deps.config.embeddingsRefreshS * 1000);
    opened.closers.push(() => embeddings.stop());
  }
  // Copies whose catalogue is not whole at their commit (converted before the catalogue existed, or whose last
  // sync failed) are read again, in the background.
  const backfill = backfillCatalogue(deps);
  opened.closers.push(() => backfill.then(() => undefined));
  // A dataset deleted through another node leaves its repository on this one's disk (decision 0026).
  // Then each repository the storage ledger has no size for yet (pushed before it) is measured (decision 0051).
  const leftovers = removeDeletedRepositories(deps)
    .catch((err: unknown) => deps.log.warn({ err }, 'removing repositories of deleted datasets failed'))
    .then(() => measureUnrecordedRepositories(deps))
    .then(
      (n) => n > 0 && deps.log.info({ measured: n }, 'hosted repositories measured for the storage quotas'),
      (err: unknown) => deps.log.warn({ err }, 'measuring hosted repositories for the storage quotas failed'),
    );
  opened.closers.push(() => leftovers.then(() => undefined));
  return {
    opened,
    deps: {
      ...deps,
      keyCache: keyCache!,
      rateLimits,
      signInLimits: createSignInLimits(rateLimits),
      deviceLimits: createDeviceLimits(rateLimits),
      datasetLimits: createDatasetLimits(rateLimits),
      gateway,
      objectVisibility,
      ownerSetup: new OwnerSetup(deps.clock),
      mcpLimits: createMcpLimits(rateLimits),
      catalogueLimits: createCatalogueLimits(rateLimits, deps.config.anonymousCatalogueRequestsPerMinute),
      recordingCaches,
      gitFetches: new FetchSlots({ perClient: deps.config.gitFetchesPerClient, total: deps.config.gitFetchesMax }),
    },
  };
}

/**
 * `nds worker`: the queue's worker alone, with the hooks of a process that finishes conversions; with
 * METRICS_PORT, a port for `/metrics`, `/healthz` and `/readyz` (`metricsUrl`).
 */
export async function startWorkerProcess(options: OpenOptions): Promise<{ worker: RunningWorker; metricsUrl: string | undefined; close(): Promise<void> }> {
  const opened = await openDeps({ kind: 'worker', ...options }, PROCESS_PARTS.worker);
  try {
    registerConversionHooks(opened.deps);
    observeQueue(opened.deps.metrics, opened.deps.db, opened.deps.clock);
    const port = options.config.metricsPort;
    const metricsUrl = port === undefined ? undefined : await openMetricsPort(opened, port);
    const worker = openWorker(opened);
    return { worker, metricsUrl, close: () => closeDeps(opened) };
  } catch (err) {
    await closeDeps(opened);
    throw err;
  }
}

/**
 * METRICS_PORT, the port for monitors of every process: `/metrics` (`http/metrics-endpoint.ts`: without
 * METRICS_TOKEN, the only port that answers it, to this machine), `/healthz` and `/readyz` as on `nds serve`.
 * `readMetrics` stands for this process's metrics (a gateway worker of several answers the sum of all).
 * Returns its URL; it is closed with the process.
 */
export async function openMetricsPort(opened: OpenedDeps, port: number, readMetrics?: () => Promise<{ text: string; contentType: string }>): Promise<string> {
  const { deps } = opened;
  const answer = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const served = currentRequest();
    if (served) served.route = req.url === '/healthz' || req.url === '/readyz' ? req.url : undefined;
    if (req.method !== 'GET' || served?.route === undefined) return answer(res, 404, { error: 'not_found', message: 'This port answers /metrics, /healthz and /readyz.', details: [] });
    const work = req.url === '/healthz' ? healthOf(deps.db).then((h) => answer(res, 200, h)) : readinessOf(deps.db).then((r) => answer(res, r.status, r.body, r.headers));
    work.catch(() => answer(res, 500, { error: 'internal_error', message: 'Something went wrong on our side.', details: [] }));
  };
  const server = createServer(observeRequests(listener, { log: deps.log, metrics: deps.metrics, metricsToken: deps.config.metricsToken, listener: 'metrics-port', readMetrics }));
  keepConnectionsAlive(server, deps.config);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  opened.closers.push(() => closeHttpServer(server));
  const address = server.address();
  return `http://localhost:${typeof address === 'object' && address ? address.port : port}`;
}

/**
 * Keeps idle client connections open for KEEP_ALIVE_TIMEOUT_S (default 65 s): longer than the idle timeout of
 * the load balancer in front (60 s on the common ones), so that it is always the balancer that closes an idle
 * connection, never nds under a request the balancer is sending (a 502). Node wants the headers timeout above it.
 */
export function keepConnectionsAlive(server: Server, config: Pick<Config, 'keepAliveTimeoutMs'>): void {
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  server.headersTimeout = config.keepAliveTimeoutMs + 1000;
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

/** The local socket of a running `nds serve` on the embedded database, in its data folder. */
export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, 'admin', 'nds.sock');
}

/**
 * While `nds serve` holds the embedded database (PGlite: one process only), `nds admin bootstrap` cannot open
 * it; it asks the running server instead, over a Unix socket in the data folder that only the same user can
 * open (mode 0600, in a folder of mode 0700). The socket answers one request, `POST /bootstrap {username, email}` → `{api_key, created, api_url}`.
 */
export async function openAdminSocket(deps: Deps, dataDir: string, log: Logger): Promise<() => Promise<void>> {
  const file = adminSocketPath(dataDir);
  // The socket's folder is the user's alone (0700), so no one else can connect even before the chmod below.
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await chmod(path.dirname(file), 0o700);
  // A socket left by a process that died is in the way; the database lock already proved none is running.
  await rm(file, { force: true });
  const server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/bootstrap') return answer(404, { error: 'not_found', message: 'The admin socket answers POST /bootstrap only.' });
    readJson(req)
      .then(async (body) => {
        const input = body as { username?: unknown; email?: unknown };
        if (typeof input.username !== 'string' || typeof input.email !== 'string') return answer(400, { error: 'validation_failed', message: 'username and email are required' });
        const { apiKey, created } = await bootstrapOwner(deps.db, { username: input.username, email: input.email }, deps.clock.now());
        log.info({ username: input.username, created }, 'owner bootstrapped through the admin socket');
        // The server's own address, so that the command prints the URL this server answers on.
        answer(200, { api_key: apiKey, created, api_url: deps.config.publicUrl });
      })
      .catch((err: Error & { code?: string; details?: string[] }) => answer(400, { error: err.code ?? 'failed', message: err.message, details: err.details ?? [] }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(file, () => resolve());
  });
  await chmod(file, 0o600);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(file, { force: true });
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16_384) throw new Error('request too large');
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
