/**
 * Every setting of nds, parsed and checked once. Nothing else in the code base reads `process.env`:
 * modules receive the typed `Config` (or the part of it they need).
 */
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { parseCidr, parseTrustedProxies, type TrustedProxies } from './ip-addresses.js';
import { credentialsFilePath } from '../client/server-identity.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  /** Listen port of `nds serve` / `nds gateway`. */
  port: number;
  /** Where the embedded defaults keep their files (PGlite, folder object store, outbox). */
  dataDir: string;
  /** `pglite:<folder>`, `pglite:memory`, or `postgres://...`. */
  databaseUrl: string;
  /** `file:<folder>` or `s3://bucket?endpoint=...&region=...`. */
  objectStoreUrl: string;
  /** The service's own origin, without a trailing slash. */
  publicUrl: string;
  /**
   * The address other nodes of the service reach this process at (NODE_URL, default PUBLIC_URL), without a
   * trailing slash: a hosted repository held here is recorded under it, and other nodes forward its git
   * requests and workers fetch its sources there (decision 0026).
   */
  nodeUrl: string;
  /** CORS: this domain and its subdomains are allowed origins. */
  serviceDomain: string;
  /** Base of the browser gateway, without a trailing slash. */
  zarrCacheBaseUrl: string;
  /** Where objects can be downloaded directly; undefined = derived from the object store. */
  zarrPublicBaseUrl: string | undefined;
  edgeApiToken: string | undefined;
  edgeZoneId: string | undefined;
  edgeApiBase: string;
  serviceWebhookToken: string | undefined;
  githubWebhookSecret: string | undefined;
  conversionDispatch: 'local' | 'github';
  githubDispatchRepo: string | undefined;
  githubToken: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  logLevel: LogLevel;
  /** Shared gateway cache; undefined = in-process LRU only. */
  cacheRedisUrl: string | undefined;
  /** Longest wait for one command of the shared cache, in ms; past it Redis is left alone for a second. */
  cacheRedisTimeoutMs: number;
  /** Upper bound of the in-process gateway cache, in bytes (each `nds gateway` worker has its own). */
  cacheMaxBytes: number;
  /** Processes of `nds gateway` sharing its port; default one per core on PostgreSQL, 1 on PGlite. */
  gatewayWorkers: number;
  /** Requests to the catalogue and the dataset search an anonymous address may make in a minute (decision 0023). */
  anonymousCatalogueRequestsPerMinute: number;
  /** OpenAI-compatible embeddings endpoint for semantic search; undefined = full text only. */
  embeddingsUrl: string | undefined;
  embeddingsApiKey: string | undefined;
  embeddingsModel: string;
  /** Seconds between two rounds of the background job that embeds new and changed datasets (decision 0023). */
  embeddingsRefreshS: number;
  datacite: { url: string; repositoryId: string; password: string; prefix: string } | undefined;
  /** Owner of datasets' git repositories on disk (hosted git). */
  gitDir: string;
  /** Seconds a device-flow client waits between token polls (RFC 8628 `interval`). */
  devicePollIntervalS: number;
  /** GitHub's REST API base (repository dispatch); tests point it at a local server. */
  githubApiUrl: string;
  /** Runs the conversion worker inside `nds serve` (with CONVERSION_DISPATCH=local); false: an API-only node. */
  inProcessWorker: boolean;
  /**
   * Seconds a running conversion job stays its worker's without a heartbeat (sent every third of it); past
   * it, any worker takes the job over. A dead worker of the same host is replaced at once, whatever this is.
   */
  conversionLeaseS: number;
  /**
   * Times a conversion job, and each recording task of it, is started before it is given up (a worker that
   * died or was lost mid-way counts as a start): the job then ends `failed`, the recording becomes a failure.
   */
  conversionMaxAttempts: number;
  /** Seconds a conversion job may run, from its first start; past it the job is ended `failed`. */
  conversionMaxS: number;
  /** Days a finished (done or failed) conversion job is kept before it is pruned. */
  conversionJobsKeepDays: number;
  /** How long a bearer-key look-up is reused, in ms (0 = never); other processes' revocations wait this long. */
  apiKeyCacheMs: number;
  /** The most files a tree of a dataset's repository may list to be converted or made a version (MAX_TREE_FILES). */
  maxTreeFiles: number;
  /**
   * The largest file a version or a conversion takes from a repository's git objects themselves
   * (MAX_GIT_FILE_BYTES); larger ones must be git-lfs or git-annex pointers to uploaded content.
   */
  maxGitFileBytes: number;
  /**
   * The largest a worker's mirror of a dataset's source repository may grow (MAX_SOURCE_MIRROR_BYTES; 0: no
   * bound): a `source_repo` on an allowed host may be any size, and git bounds no fetch.
   */
  maxSourceMirrorBytes: number;
  /**
   * The largest pack one `git push` to a hosted repository may send (MAX_GIT_PUSH_BYTES; GitHub's is 2 GiB): a
   * larger push is refused by git as it arrives, before it is written. Data goes to content objects, not git.
   */
  maxGitPushBytes: number;
  /** The most refs one `git push` to a hosted repository may update (MAX_GIT_PUSH_REFS): git writes a file for each. */
  maxGitPushRefs: number;
  /**
   * Clones and fetches of hosted repositories one client (its address, an IPv6 one by its /64) may run on this
   * process at once (GIT_FETCHES_PER_CLIENT); one more is refused 429 (decision 0059).
   */
  gitFetchesPerClient: number;
  /** Clones and fetches this process serves at once, from everyone (GIT_FETCHES_MAX); one more is refused 503. */
  gitFetchesMax: number;
  /** The most memory each git process of a clone or fetch may allocate (GIT_FETCH_MEMORY_BYTES), a worker's too. */
  gitFetchMemoryBytes: number;
  /** The most CPU time each git process of a clone or fetch may take, in seconds (GIT_FETCH_CPU_S), a worker's too. */
  gitFetchCpuS: number;
  /** Seconds a clone or fetch may go without a byte moving either way before its git is ended (GIT_FETCH_STALL_S). */
  gitFetchStallS: number;
  /** Seconds one clone or fetch request may take in all before its git is ended (GIT_FETCH_MAX_S). */
  gitFetchMaxS: number;
  /** Sandbox datasets an account (not an admin) may hold at once; sandbox reset frees them. */
  sandboxDatasetsMax: number;
  /**
   * Bytes the datasets an account owns may hold together (STORAGE_QUOTA_BYTES): uploaded content, uploads in
   * parts under way, hosted git repositories. 0: no limit. Admins' datasets are not counted.
   */
  storageQuotaBytes: number;
  /** The same, for an account's sandbox datasets together (SANDBOX_STORAGE_QUOTA_BYTES; 0: no limit). */
  sandboxStorageQuotaBytes: number;
  /** Signs the folder store's presigned URLs and scoped object tokens; undefined = generated once under DATA_DIR. */
  objectSigningSecret: string | undefined;
  /** Files of at least this many bytes are uploaded in parts (UPLOAD_PART_THRESHOLD). */
  uploadPartThreshold: number;
  /** The smallest part of a multipart upload (UPLOAD_PART_SIZE); larger files get larger parts, at most 10,000. */
  uploadPartSize: number;
  /** Seconds after which an unfinished multipart upload is aborted and its parts deleted (UPLOAD_STALE_AFTER_S). */
  uploadStaleAfterS: number;
  /**
   * How long `POST .../complete` waits for a completion before it answers `202 completing` and lets it run on
   * (UPLOAD_COMPLETE_WAIT_MS): assembling and hashing a large file takes minutes, longer than proxies and
   * HTTP clients keep a request open.
   */
  uploadCompleteWaitMs: number;
  /** Proxies whose `X-Forwarded-For` names the client (TRUSTED_PROXIES); empty = the socket's peer is the client. */
  trustedProxies: TrustedProxies;
  /** Where rate limits are counted (RATE_LIMIT_REDIS_URL); undefined = the database. */
  rateLimitRedisUrl: string | undefined;
  /** CSP `frame-ancestors` of the viewer's `?embed=1`: `*` (any site, the default), `'none'`, or origins. */
  viewerFrameAncestors: string[];
  /** Hosts a dataset's `source_repo` may name (an https URL there), lower case; default github.com. */
  sourceRepoHosts: string[];
  /** CIDRs a `source_repo` host may resolve into although they are not public (a git server on the LAN); default none. */
  sourceRepoAllowPrivate: string[];
  /** Bearer token `GET /metrics` wants (METRICS_TOKEN); undefined = readable on METRICS_PORT only, from this machine, through no proxy. */
  metricsToken: string | undefined;
  /** Port of every process's `/metrics`, `/healthz` and `/readyz` for monitors (METRICS_PORT); undefined = none (`nds serve` and `nds gateway` answer them on PORT, `/metrics` with METRICS_TOKEN only). */
  metricsPort: number | undefined;
  /** Most PostgreSQL connections this process holds (DATABASE_POOL_MAX); undefined = 10, or 3 in each gateway process. */
  databasePoolMax: number | undefined;
  /** Longest a PostgreSQL statement may run, in ms, before the server cancels it (answered 503); 0 = no limit. */
  databaseStatementTimeoutMs: number;
  /** How long an idle kept-alive HTTP connection stays open, in ms; above load balancers' idle timeouts (60 s). */
  keepAliveTimeoutMs: number;
}

export class ConfigError extends Error {
  readonly setting: string;
  constructor(setting: string, problem: string) {
    super(`${setting}: ${problem}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

type Env = Record<string, string | undefined>;

/** Reads `KEY=value` lines of a `.env` file into an object; existing environment values win. */
export function readDotEnv(file: string): Env {
  if (!existsSync(file)) return {};
  const out: Env = {};
  for (const line of readFileSync(file, 'utf8').split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)\s*$/.exec(line);
    if (!m) continue;
    let value = m[2];
    if (/^(['"]).*\1$/.test(value)) value = value.slice(1, -1);
    out[m[1]] = value;
  }
  return out;
}

function text(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const v = text(env, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new ConfigError(name, `expected a whole number, got "${v}"`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(name, `expected a number from ${min} to ${max}, got ${n}`);
  return n;
}

function httpUrl(env: Env, name: string, fallback: string): string {
  const v = text(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new ConfigError(name, `expected an http(s) URL, got "${v}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `expected an http(s) URL, got "${v}"`);
  }
  return v.replace(/\/+$/, '');
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const v = text(env, name);
  if (v === undefined) return fallback;
  if (!(values as readonly string[]).includes(v)) {
    throw new ConfigError(name, `expected one of ${values.join(', ')}, got "${v}"`);
  }
  return v as T;
}

function checkDatabaseUrl(v: string): string {
  if (v.startsWith('pglite:') || /^postgres(ql)?:\/\//.test(v)) return v;
  throw new ConfigError('DATABASE_URL', `expected pglite:<folder> or postgres://..., got "${v}"`);
}

function checkObjectStoreUrl(v: string): string {
  if (v.startsWith('file:')) return v;
  if (v.startsWith('s3://')) {
    const u = new URL(v);
    if (!u.hostname) throw new ConfigError('OBJECT_STORE_URL', 's3:// needs a bucket name: s3://bucket?endpoint=...');
    return v;
  }
  throw new ConfigError('OBJECT_STORE_URL', `expected file:<folder> or s3://bucket?endpoint=..., got "${v}"`);
}

function secretText(env: Env, name: string): string | undefined {
  const v = text(env, name);
  if (v !== undefined && v.length < 16) throw new ConfigError(name, 'expected at least 16 characters');
  return v;
}

/**
 * A CSP `frame-ancestors` source list: `*`, `'self'`, `'none'` (alone), or origins such as
 * `https://lab.example.org` and `https://*.example.org`, separated by spaces or commas. Default `*`.
 */
function frameAncestors(env: Env, name: string): string[] {
  const sources = (text(env, name) ?? '*').split(/[\s,]+/).filter((s) => s !== '');
  for (const s of sources) {
    if (s === '*' || s === "'self'" || s === "'none'") continue;
    if (!/^https?:\/\/(?:\*\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d{1,5})?$/.test(s)) {
      throw new ConfigError(name, `expected *, 'self', 'none' or origins like https://lab.example.org, got "${s}"`);
    }
  }
  if (sources.includes("'none'") && sources.length > 1) throw new ConfigError(name, "'none' goes alone");
  return sources;
}

function hostList(env: Env, name: string, fallback: string[]): string[] {
  const v = text(env, name);
  if (v === undefined) return fallback;
  const hosts = v.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  for (const h of hosts) {
    if (!/^[a-z0-9.-]+$/.test(h) && !/^\[[0-9a-f:.]+\]$/.test(h)) throw new ConfigError(name, `not a host name: "${h}"`);
  }
  return hosts;
}

function cidrList(env: Env, name: string): string[] {
  const v = text(env, name);
  if (v === undefined) return [];
  const cidrs = v.split(',').map((c) => c.trim()).filter((c) => c !== '');
  for (const c of cidrs) if (!parseCidr(c)) throw new ConfigError(name, `expected addresses or CIDRs such as 10.0.0.0/8 or fd00::/8, got "${c}"`);
  return cidrs;
}

function optionalUrl(env: Env, name: string): string | undefined {
  return text(env, name) === undefined ? undefined : httpUrl(env, name, '');
}

export interface LoadOptions {
  /** The process writes to a person's terminal (`nds serve` in a shell): LOG_LEVEL defaults to `warn`, not `info`. */
  terminal?: boolean;
}

/**
 * Builds the configuration from an environment (by default `process.env` over `.env`).
 * Throws `ConfigError` naming the first malformed setting.
 */
export function loadConfig(env: Env = { ...readDotEnv('.env'), ...process.env }, options: LoadOptions = {}): Config {
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const dataDir = path.resolve(text(env, 'DATA_DIR') ?? './data');
  const publicUrl = httpUrl(env, 'PUBLIC_URL', `http://localhost:${port}`);
  const serviceDomain = (text(env, 'SERVICE_DOMAIN') ?? new URL(publicUrl).hostname).toLowerCase();
  if (!/^[a-z0-9.-]+$/.test(serviceDomain)) throw new ConfigError('SERVICE_DOMAIN', `not a domain name: "${serviceDomain}"`);
  const dc = {
    url: text(env, 'DATACITE_URL'),
    repositoryId: text(env, 'DATACITE_REPOSITORY_ID'),
    password: text(env, 'DATACITE_PASSWORD'),
    prefix: text(env, 'DATACITE_PREFIX'),
  };
  if (dc.url !== undefined) httpUrl(env, 'DATACITE_URL', '');
  const dcSet = Object.values(dc).filter((v) => v !== undefined).length;
  if (dcSet > 0 && dcSet < 4) {
    throw new ConfigError('DATACITE_URL', 'DATACITE_URL, DATACITE_REPOSITORY_ID, DATACITE_PASSWORD and DATACITE_PREFIX go together');
  }
  const conversionDispatch = oneOf(env, 'CONVERSION_DISPATCH', ['local', 'github'] as const, 'local');
  const githubDispatchRepo = text(env, 'GITHUB_DISPATCH_REPO');
  if (conversionDispatch === 'github' && (!githubDispatchRepo || !text(env, 'GITHUB_TOKEN'))) {
    throw new ConfigError('CONVERSION_DISPATCH', 'github dispatch needs GITHUB_DISPATCH_REPO and GITHUB_TOKEN');
  }
  if (githubDispatchRepo !== undefined && !/^[\w.-]+\/[\w.-]+$/.test(githubDispatchRepo)) {
    throw new ConfigError('GITHUB_DISPATCH_REPO', `expected owner/name, got "${githubDispatchRepo}"`);
  }
  const cacheRedisUrl = text(env, 'CACHE_REDIS_URL');
  if (cacheRedisUrl !== undefined && !/^rediss?:\/\//.test(cacheRedisUrl)) {
    throw new ConfigError('CACHE_REDIS_URL', `expected redis://..., got "${cacheRedisUrl}"`);
  }
  const databaseUrl = checkDatabaseUrl(text(env, 'DATABASE_URL') ?? `pglite:${path.join(dataDir, 'db')}`);
  // PGlite is the database of one process: a second worker cannot open it.
  const gatewayWorkers = integer(env, 'GATEWAY_WORKERS', databaseUrl.startsWith('pglite:') ? 1 : availableParallelism(), 1, 256);
  if (gatewayWorkers > 1 && databaseUrl.startsWith('pglite:')) {
    throw new ConfigError('GATEWAY_WORKERS', 'several gateway workers need DATABASE_URL=postgres://... (PGlite is one process\'s database)');
  }
  const rateLimitRedisUrl = text(env, 'RATE_LIMIT_REDIS_URL');
  if (rateLimitRedisUrl !== undefined && !/^rediss?:\/\//.test(rateLimitRedisUrl)) {
    throw new ConfigError('RATE_LIMIT_REDIS_URL', `expected redis://..., got "${rateLimitRedisUrl}"`);
  }
  let trustedProxies: TrustedProxies;
  try {
    trustedProxies = parseTrustedProxies(text(env, 'TRUSTED_PROXIES'));
  } catch (err) {
    throw new ConfigError('TRUSTED_PROXIES', (err as Error).message);
  }
  const smtpUrl = text(env, 'SMTP_URL');
  if (smtpUrl !== undefined && !/^smtps?:\/\//.test(smtpUrl)) {
    throw new ConfigError('SMTP_URL', `expected smtp://... or smtps://..., got "${smtpUrl}"`);
  }
  return {
    port,
    dataDir,
    databaseUrl,
    objectStoreUrl: checkObjectStoreUrl(text(env, 'OBJECT_STORE_URL') ?? `file:${path.join(dataDir, 'objects')}`),
    publicUrl,
    nodeUrl: httpUrl(env, 'NODE_URL', publicUrl),
    serviceDomain,
    zarrCacheBaseUrl: httpUrl(env, 'ZARR_CACHE_BASE_URL', `${publicUrl}/zarrproxy`),
    zarrPublicBaseUrl: optionalUrl(env, 'ZARR_PUBLIC_BASE_URL'),
    edgeApiToken: text(env, 'EDGE_API_TOKEN'),
    edgeZoneId: text(env, 'EDGE_ZONE_ID'),
    edgeApiBase: httpUrl(env, 'EDGE_API_BASE', 'https://api.cloudflare.com/client/v4'),
    serviceWebhookToken: text(env, 'SERVICE_WEBHOOK_TOKEN'),
    githubWebhookSecret: text(env, 'GITHUB_WEBHOOK_SECRET'),
    conversionDispatch,
    githubDispatchRepo,
    githubToken: text(env, 'GITHUB_TOKEN'),
    smtpUrl,
    mailFrom: text(env, 'MAIL_FROM') ?? `nds <no-reply@${serviceDomain}>`,
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, options.terminal ? 'warn' : 'info'),
    cacheRedisUrl,
    cacheRedisTimeoutMs: integer(env, 'CACHE_REDIS_TIMEOUT_MS', 500, 10, 60_000),
    cacheMaxBytes: integer(env, 'CACHE_MAX_BYTES', 256 * 1024 * 1024, 0, Number.MAX_SAFE_INTEGER),
    gatewayWorkers,
    anonymousCatalogueRequestsPerMinute: integer(env, 'ANONYMOUS_CATALOGUE_PER_MINUTE', 300, 1, 1_000_000),
    embeddingsUrl: optionalUrl(env, 'EMBEDDINGS_URL'),
    embeddingsApiKey: text(env, 'EMBEDDINGS_API_KEY'),
    embeddingsModel: text(env, 'EMBEDDINGS_MODEL') ?? 'text-embedding-3-small',
    embeddingsRefreshS: integer(env, 'EMBEDDINGS_REFRESH_S', 30, 1, 86_400),
    datacite: dcSet === 4 ? (dc as NonNullable<Config['datacite']>) : undefined,
    gitDir: path.resolve(text(env, 'GIT_DIR_ROOT') ?? path.join(dataDir, 'git')),
    devicePollIntervalS: integer(env, 'DEVICE_POLL_INTERVAL_S', 5, 1, 60),
    githubApiUrl: httpUrl(env, 'GITHUB_API_URL', 'https://api.github.com'),
    inProcessWorker: oneOf(env, 'IN_PROCESS_WORKER', ['true', 'false'] as const, 'true') === 'true',
    conversionLeaseS: integer(env, 'CONVERSION_LEASE_S', 30, 3, 3600),
    conversionMaxAttempts: integer(env, 'CONVERSION_MAX_ATTEMPTS', 3, 1, 100),
    conversionMaxS: integer(env, 'CONVERSION_MAX_S', 86_400, 1, 365 * 86_400),
    conversionJobsKeepDays: integer(env, 'CONVERSION_JOBS_KEEP_DAYS', 30, 1, 36_500),
    objectSigningSecret: secretText(env, 'OBJECT_SIGNING_SECRET'),
    apiKeyCacheMs: integer(env, 'API_KEY_CACHE_MS', 1000, 0, 60_000),
    maxTreeFiles: integer(env, 'MAX_TREE_FILES', 1_000_000, 1, 10_000_000),
    maxGitFileBytes: integer(env, 'MAX_GIT_FILE_BYTES', 100 * 1024 ** 2, 1024, 5 * 1024 ** 3),
    maxSourceMirrorBytes: integer(env, 'MAX_SOURCE_MIRROR_BYTES', 100 * 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
    maxGitPushBytes: integer(env, 'MAX_GIT_PUSH_BYTES', 2 * 1024 ** 3, 1024 ** 2, 1024 ** 4),
    maxGitPushRefs: integer(env, 'MAX_GIT_PUSH_REFS', 1000, 1, 1_000_000),
    gitFetchesPerClient: integer(env, 'GIT_FETCHES_PER_CLIENT', 2, 1, 10_000),
    gitFetchesMax: integer(env, 'GIT_FETCHES_MAX', Math.max(4, 2 * availableParallelism()), 1, 10_000),
    gitFetchMemoryBytes: integer(env, 'GIT_FETCH_MEMORY_BYTES', 1024 ** 3, 16 * 1024 ** 2, 1024 ** 4),
    gitFetchCpuS: integer(env, 'GIT_FETCH_CPU_S', 600, 1, 86_400),
    gitFetchStallS: integer(env, 'GIT_FETCH_STALL_S', 60, 1, 3600),
    gitFetchMaxS: integer(env, 'GIT_FETCH_MAX_S', 3600, 1, 7 * 86_400),
    sandboxDatasetsMax: integer(env, 'SANDBOX_DATASETS_MAX', 5, 1, 1000),
    storageQuotaBytes: integer(env, 'STORAGE_QUOTA_BYTES', 0, 0, 2 ** 53 - 1),
    sandboxStorageQuotaBytes: integer(env, 'SANDBOX_STORAGE_QUOTA_BYTES', 10 * 1024 ** 3, 0, 2 ** 53 - 1),
    uploadPartThreshold: integer(env, 'UPLOAD_PART_THRESHOLD', 64 * 1024 ** 2, 5 * 1024 ** 2, 5 * 1024 ** 3),
    uploadPartSize: integer(env, 'UPLOAD_PART_SIZE', 8 * 1024 ** 2, 5 * 1024 ** 2, 5 * 1024 ** 3),
    uploadStaleAfterS: integer(env, 'UPLOAD_STALE_AFTER_S', 7 * 24 * 3600, 60, 365 * 24 * 3600),
    uploadCompleteWaitMs: integer(env, 'UPLOAD_COMPLETE_WAIT_MS', 20_000, 0, 300_000),
    trustedProxies,
    rateLimitRedisUrl,
    viewerFrameAncestors: frameAncestors(env, 'VIEWER_FRAME_ANCESTORS'),
    sourceRepoHosts: hostList(env, 'SOURCE_REPO_HOSTS', ['github.com']),
    sourceRepoAllowPrivate: cidrList(env, 'SOURCE_REPO_ALLOW_PRIVATE'),
    metricsToken: secretText(env, 'METRICS_TOKEN'),
    metricsPort: text(env, 'METRICS_PORT') === undefined ? undefined : integer(env, 'METRICS_PORT', 0, 0, 65535),
    databasePoolMax: text(env, 'DATABASE_POOL_MAX') === undefined ? undefined : integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 0, 3_600_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_S', 65, 1, 240) * 1000,
  };
}

/**
 * Where the server's child processes (`git`, `tar`) find their programs: this process's own `PATH`. They
 * get nothing else of its environment (`git/spawn-git.ts`).
 */
export function executableSearchPath(env: Env = process.env): string {
  return text(env, 'PATH') ?? '/usr/local/bin:/usr/bin:/bin';
}

/** Settings of the client commands (`nds auth ...`, `nds datasets ...`). */
export interface ClientConfig {
  /** NDS_API_URL; when unset, the URL stored by `nds auth login`, else the default (`client/server-identity.ts`). */
  apiUrl: string | undefined;
  apiKey: string | undefined;
  credentialsFile: string;
  /** Where `nds datasets upload` remembers the SHA-256 of files it read (NDS_UPLOAD_HASH_CACHE; `off` = nowhere). */
  uploadHashCacheFile: string | undefined;
  /** Whether `nds auth login` may open a web browser: never with NDS_NO_BROWSER=1; else on macOS, or with a display. */
  openBrowser: boolean;
  /** The folders of PATH: whether this `nds` is installed as a command there decides how hints spell it. */
  searchPath: string[];
}

function uploadHashCache(env: Env): string | undefined {
  const chosen = text(env, 'NDS_UPLOAD_HASH_CACHE');
  if (chosen === 'off') return undefined;
  if (chosen) return path.resolve(chosen);
  const cacheHome = text(env, 'XDG_CACHE_HOME') ?? path.join(text(env, 'HOME') ?? '.', '.cache');
  return path.join(cacheHome, 'nds', 'upload-hashes.json');
}

export function loadClientConfig(env: Env = process.env): ClientConfig {
  return {
    apiUrl: optionalUrl(env, 'NDS_API_URL'),
    apiKey: text(env, 'NDS_API_KEY'),
    credentialsFile: path.resolve(credentialsFilePath({ XDG_CONFIG_HOME: text(env, 'XDG_CONFIG_HOME'), HOME: text(env, 'HOME') })),
    uploadHashCacheFile: uploadHashCache(env),
    openBrowser: text(env, 'NDS_NO_BROWSER') !== '1' && (process.platform === 'darwin' || !!text(env, 'DISPLAY') || !!text(env, 'WAYLAND_DISPLAY')),
    searchPath: (text(env, 'PATH') ?? '').split(path.delimiter).filter(Boolean),
  };
}
