/**
 * The browser gateway for Zarr data (docs/gateway.md): serves objects of public datasets' Zarr copies from the
 * object store, with CORS, Range, ETag/304 and a cache. HTTP-free: it takes a request's method, raw target
 * and headers and returns a `GatewayAnswer`; `routes.ts` (hono) and `gateway-server.ts` write it out.
 *
 * Objects are read through `deps.objects`. With an S3 store that uses the store's credentials, but only for
 * reads of `<id>/zarr/` objects, which are public-read anyway (docs/gateway.md): the gateway needs no credential of
 * its own, and could equally fetch the store's public URLs.
 */
import { contentRange, parseSingleRange } from '../objects/byte-range.js';
import type { ObjectInfo } from '../objects/object-store.js';
import { readBody } from '../objects/read-object.js';
import { systemClock } from '../core/clock.js';
import type { Deps } from '../deps.js';
import { OriginPolicy } from './cors.js';
import { cachedObject, type CachedObject, type CacheEntry, type GatewayCache } from './gateway-cache.js';
import { gatewayRelativePath, parseObjectPath, type ObjectPath, type PathVerdict } from './gateway-path.js';
import { MemoryCache } from './memory-cache.js';
import { cachePolicy, errorAnswer, etagMatches, headerList, objectHeaders, type CacheVerdict, type GatewayAnswer, type HeaderList } from './object-answers.js';
import { privateAnswer, ReadGrantGate } from './read-grant.js';
import { RedisCache } from './redis-cache.js';
import { RelayedCache, type DropChannel } from './relayed-cache.js';
import { VisibilityGate } from './visibility-gate.js';

/** What a gateway reads: visibility from the database, objects from the store. */
export type GatewayDeps = Pick<Deps, 'config' | 'db' | 'log' | 'clock' | 'objects'>;

export interface GatewayRequest {
  method: string;
  /** The raw request target (path and query, still percent-encoded), e.g. `/zarrproxy/nd000001/zarr/x`. */
  target: string;
  /** A request header by lower-case name. */
  header(name: string): string | undefined;
}

/** Larger objects are streamed and never held whole in memory (nor cached). */
export const MAX_CACHED_OBJECT_BYTES = 8 * 1024 * 1024;
const MISSING_TTL_MS = 60_000;
/** Bound of the remembered path verdicts; forgotten all at once when full (a flood of paths grows nothing). */
const MAX_REMEMBERED_PATHS = 10_000;

export class Gateway {
  readonly cache: GatewayCache;
  readonly #deps: GatewayDeps;
  readonly #gate: VisibilityGate;
  readonly #grants: ReadGrantGate;
  readonly #origins: OriginPolicy;
  readonly #basePath: string;
  readonly #maxObjectBytes: number;
  /** Verdicts of `parseObjectPath` by raw target: a hot chunk is parsed once, not on every hit. */
  readonly #paths = new Map<string, PathVerdict>();
  /** Bumped by every drop, made here or heard from another instance, so a miss that raced it does not put stale bytes back. */
  #dropGeneration = 0;

  constructor(deps: GatewayDeps, cache: GatewayCache) {
    this.#deps = deps;
    this.cache = cache;
    const now = () => deps.clock.now().getTime();
    this.#gate = new VisibilityGate(deps.db, now, undefined, (id) => cache.fillEpoch(id));
    this.#grants = new ReadGrantGate(deps);
    this.#origins = new OriginPolicy(deps.config.serviceDomain);
    this.#basePath = new URL(deps.config.zarrCacheBaseUrl).pathname.replace(/\/+$/, '');
    this.#maxObjectBytes = Math.min(MAX_CACHED_OBJECT_BYTES, deps.config.cacheMaxBytes);
    cache.onDropHeard((id) => {
      this.#dropGeneration++;
      if (id !== undefined) this.#gate.forget(id);
    });
  }

  /** The request target below the gateway base (`/<id>/zarr/<path>`, `/edge/...`). */
  relativePath(target: string): string {
    return gatewayRelativePath(target, this.#basePath);
  }

  async serve(req: GatewayRequest): Promise<GatewayAnswer> {
    return this.answerNow(req) ?? this.#answerLater(req);
  }

  /**
   * The answer, when it needs no I/O: refusals, preflights and hits in this process's cache; undefined
   * otherwise (then `serve` reads the shared cache or the store). The server's hot path: no promise.
   */
  answerNow(req: GatewayRequest): GatewayAnswer | undefined {
    const cors = this.#origins.headers(req.header('origin'));
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
      return errorAnswer('method_not_allowed', [...cors, 'allow', 'GET, HEAD, OPTIONS', 'cache-control', 'no-store']);
    }
    const verdict = this.#pathOf(req.target);
    if (!verdict.ok) {
      return errorAnswer(verdict.status === 400 ? 'bad_request' : 'not_found', [...cors, 'cache-control', 'no-store'], [verdict.reason]);
    }
    if (method === 'OPTIONS') return { status: 204, headers: [...cors, 'access-control-max-age', '600'], body: null };
    const cached = this.cache.getLocal(verdict.object.key);
    if (!cached) return undefined;
    if (cached.kind === 'missing') return missingAnswer(cors, 'HIT');
    return answerFromBytes(cached, req, cors, 'HIT');
  }

  /** Forgets a dataset's visibility answer and cached objects, on every instance. */
  async dropDataset(datasetId: string): Promise<void> {
    this.#dropGeneration++;
    this.#gate.forget(datasetId);
    await this.cache.dropDataset(datasetId);
  }

  /** Forgets cached objects by key (`<id>/zarr/<path>`), on every instance. */
  async dropKeys(keys: string[]): Promise<void> {
    this.#dropGeneration++;
    await this.cache.dropKeys(keys);
  }

  /** Forgets the cached objects whose keys start with one of these, on every instance. */
  async dropKeyPrefixes(prefixes: string[]): Promise<void> {
    this.#dropGeneration++;
    await this.cache.dropPrefixes(prefixes);
  }

  /** Empties the cache of objects and of missing-object answers, on every instance. Visibility answers stay. */
  async dropEverything(): Promise<void> {
    this.#dropGeneration++;
    await this.cache.dropAll();
  }

  async close(): Promise<void> {
    await this.cache.close();
  }

  #pathOf(target: string): PathVerdict {
    let verdict = this.#paths.get(target);
    if (verdict) return verdict;
    verdict = parseObjectPath(this.relativePath(target));
    if (this.#paths.size >= MAX_REMEMBERED_PATHS) this.#paths.clear();
    this.#paths.set(target, verdict);
    return verdict;
  }

  /** After `answerNow` found nothing in this process: the shared cache, then the store. */
  async #answerLater(req: GatewayRequest): Promise<GatewayAnswer> {
    const cors = this.#origins.headers(req.header('origin'));
    const verdict = this.#pathOf(req.target);
    if (!verdict.ok) throw new Error('answerNow answers every refused path');
    const { object } = verdict;
    const shared = await this.cache.getShared(object.key);
    if (shared) {
      if (shared.kind === 'missing') return missingAnswer(cors, 'HIT');
      return answerFromBytes(shared, req, cors, 'HIT');
    }
    return this.#miss(object, req, cors);
  }

  async #miss(object: ObjectPath, req: GatewayRequest, cors: HeaderList): Promise<GatewayAnswer> {
    const generation = this.#dropGeneration;
    const admission = await this.#gate.admit(object.datasetId);
    if (!admission.isPublic) {
      // A private preview's read grant (read-grant.ts): served from the store, never cached.
      if (await this.#grants.allows(req.header('authorization'), object.datasetId)) return privateAnswer(await this.#uncached(object, req, cors));
      return errorAnswer('dataset_not_found', [...cors, 'cache-control', 'no-store', 'x-cache', 'BYPASS']);
    }
    const { objects } = this.#deps;
    const { ttlMs } = cachePolicy(object.path);
    if (req.method === 'HEAD') {
      const info = await objects.head(object.key);
      if (!info) return this.#rememberMissing(object, cors, generation, admission.epoch);
      return answerFromStore(info, object, req, cors);
    }
    const found = await objects.get(object.key);
    if (!found) return this.#rememberMissing(object, cors, generation, admission.epoch);
    const { info, body } = found;
    if (info.size > this.#maxObjectBytes) {
      body.destroy();
      return answerFromStore(info, object, req, cors, (range) => objects.get(object.key, range));
    }
    const entry = cachedObject(await readBody(body), info.etag, objectHeaders(info, object.path));
    if (entry.body.length !== info.size) throw new Error(`object ${object.key} changed while it was read`);
    await this.#keep(object, entry, ttlMs, generation, admission.epoch);
    return answerFromBytes(entry, req, cors, 'MISS');
  }

  /** An object read from the store and put in no cache. */
  async #uncached(object: ObjectPath, req: GatewayRequest, cors: HeaderList): Promise<GatewayAnswer> {
    const { objects } = this.#deps;
    const info = await objects.head(object.key);
    if (!info) return missingAnswer(cors, 'BYPASS');
    return answerFromStore(info, object, req, cors, req.method === 'GET' ? (range) => objects.get(object.key, range) : undefined);
  }

  async #rememberMissing(object: ObjectPath, cors: HeaderList, generation: number, epoch: string | undefined): Promise<GatewayAnswer> {
    await this.#keep(object, { kind: 'missing' }, MISSING_TTL_MS, generation, epoch);
    return missingAnswer(cors, 'MISS');
  }

  /**
   * Caches what a miss read, unless a drop came since it began: here (`generation`), or on another instance
   * (the shared cache's `epoch`; then the visibility answer it came with is stale too, and goes).
   */
  async #keep(object: ObjectPath, entry: CacheEntry, ttlMs: number, generation: number, epoch: string | undefined): Promise<void> {
    if (generation !== this.#dropGeneration) return;
    if (!(await this.cache.set(object.datasetId, object.key, entry, ttlMs, epoch))) this.#gate.forget(object.datasetId);
  }
}

function missingAnswer(cors: HeaderList, verdict: CacheVerdict): GatewayAnswer {
  return errorAnswer('not_found', [...cors, 'cache-control', 'public, max-age=60', 'x-cache', verdict]);
}

/** The range asked for, unless If-Range names another version (RFC 9110 section 13.1.5: then the whole object). */
function requestedRange(req: GatewayRequest, etag: string): string | undefined {
  const range = req.header('range');
  if (!range) return undefined;
  const ifRange = req.header('if-range');
  return ifRange === undefined || ifRange === etag ? range : undefined;
}

function notModified(headers: Readonly<Record<string, string>>, cors: HeaderList, verdict: CacheVerdict): GatewayAnswer {
  return { status: 304, headers: [...cors, 'etag', headers.etag!, 'cache-control', headers['cache-control']!, 'x-cache', verdict], body: null };
}

function unsatisfiable(size: number, cors: HeaderList, verdict: CacheVerdict): GatewayAnswer {
  return errorAnswer('range_not_satisfiable', [...cors, 'content-range', contentRange(size), 'accept-ranges', 'bytes', 'x-cache', verdict]);
}

/** 200, 206, 304 or 416 from an object's bytes in memory; a 206 body is a view of them, not a copy. */
function answerFromBytes(entry: CachedObject, req: GatewayRequest, cors: HeaderList, verdict: CacheVerdict): GatewayAnswer {
  const inm = req.header('if-none-match');
  if (inm !== undefined && etagMatches(inm, entry.etag)) return notModified(entry.headers, cors, verdict);
  const head = req.method === 'HEAD';
  const rangeHeader = requestedRange(req, entry.etag);
  if (rangeHeader !== undefined) {
    const size = entry.body.length;
    const range = parseSingleRange(rangeHeader, size);
    if (range === 'unsatisfiable') return unsatisfiable(size, cors, verdict);
    if (range) {
      return {
        status: 206,
        headers: [...entry.partialList, 'content-length', String(range.end - range.start + 1), 'content-range', contentRange(size, range), ...cors, 'x-cache', verdict],
        body: head ? null : entry.body.subarray(range.start, range.end + 1),
      };
    }
  }
  return { status: 200, headers: [...entry.fullList, ...cors, 'x-cache', verdict], body: head ? null : entry.body };
}

type RangeReader = (range: { start: number; end: number } | undefined) => Promise<{ info: ObjectInfo; body: import('node:stream').Readable } | undefined>;

/** 200, 206, 304 or 416 streamed from the store (HEAD, or an object too large to cache); never cached. */
async function answerFromStore(info: ObjectInfo, object: ObjectPath, req: GatewayRequest, cors: HeaderList, read?: RangeReader): Promise<GatewayAnswer> {
  const headers = objectHeaders(info, object.path);
  const inm = req.header('if-none-match');
  if (inm !== undefined && etagMatches(inm, info.etag)) return notModified(headers, cors, 'BYPASS');
  const rangeHeader = requestedRange(req, info.etag);
  const range = rangeHeader === undefined ? null : parseSingleRange(rangeHeader, info.size);
  if (range === 'unsatisfiable') return unsatisfiable(info.size, cors, 'BYPASS');
  let status = 200;
  let out: string[];
  if (range) {
    status = 206;
    out = [...headerList(headers, 'content-length'), 'content-length', String(range.end - range.start + 1), 'content-range', contentRange(info.size, range)];
  } else out = headerList(headers);
  out.push(...cors, 'x-cache', 'BYPASS');
  if (!read) return { status, headers: out, body: null };
  const found = await read(range ?? undefined);
  if (!found) return missingAnswer(cors, 'BYPASS');
  return { status, headers: out, body: found.body };
}

/**
 * The gateway of a process, with the cache its configuration names: Redis when shared (CACHE_REDIS_URL),
 * relayed to sibling workers over `peers` (a worker of `nds gateway` on several processes, without Redis),
 * else this process's memory. `lifecycle.ts` makes one per process (the API host's `/zarrproxy` mount and the
 * gateway host share its cache) and registers its hooks.
 */
export function createGateway(deps: GatewayDeps, peers?: DropChannel): Gateway {
  const { config, log } = deps;
  // Every hit checks an expiry: on the real clock, without making a Date.
  const now = deps.clock === systemClock ? Date.now : () => deps.clock.now().getTime();
  const cache = config.cacheRedisUrl
    ? new RedisCache({ url: config.cacheRedisUrl, maxLocalBytes: config.cacheMaxBytes, timeoutMs: config.cacheRedisTimeoutMs, log, now })
    : peers
      ? new RelayedCache(config.cacheMaxBytes, peers, now)
      : new MemoryCache(config.cacheMaxBytes, now);
  return new Gateway(deps, cache);
}
