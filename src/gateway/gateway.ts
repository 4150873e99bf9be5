/**
 * The browser gateway for Zarr data (CONTRACT §6): serves objects of public datasets' Zarr copies from the
 * object store, with CORS, Range, ETag/304 and a cache. HTTP-free: it takes a request's method, raw target
 * and headers and returns a `GatewayAnswer`; `routes.ts` (hono) and `gateway-server.ts` write it out.
 *
 * Objects are read through `deps.objects`. With an S3 store that uses the store's credentials, but only for
 * reads of `<id>/zarr/` objects, which are public-read anyway (seed §2): the gateway needs no credential of
 * its own, and could equally fetch the store's public URLs.
 */
import { contentRange, parseSingleRange } from '../objects/byte-range.js';
import type { ObjectInfo } from '../objects/object-store.js';
import type { Deps } from '../deps.js';
import { ALLOWED_ORIGIN_HEADERS, OriginPolicy } from './cors.js';
import type { CachedObject, GatewayCache } from './gateway-cache.js';
import { gatewayRelativePath, parseObjectPath, type ObjectPath } from './gateway-path.js';
import { MemoryCache } from './memory-cache.js';
import { cachePolicy, errorAnswer, etagMatches, objectHeaders, type CacheVerdict, type GatewayAnswer } from './object-answers.js';
import { RedisCache } from './redis-cache.js';
import { VisibilityGate } from './visibility-gate.js';

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
const REFUSED_ORIGIN = Object.freeze({ vary: 'Origin' });

export class Gateway {
  readonly cache: GatewayCache;
  readonly #deps: Deps;
  readonly #gate: VisibilityGate;
  readonly #origins: OriginPolicy;
  readonly #basePath: string;
  readonly #maxObjectBytes: number;
  /** Bumped by every dataset drop, so a miss that raced it does not put stale bytes back. */
  #dropGeneration = 0;

  constructor(deps: Deps, cache: GatewayCache) {
    this.#deps = deps;
    this.cache = cache;
    const now = () => deps.clock.now().getTime();
    this.#gate = new VisibilityGate(deps.db, now);
    this.#origins = new OriginPolicy(deps.config.serviceDomain);
    this.#basePath = new URL(deps.config.zarrCacheBaseUrl).pathname.replace(/\/+$/, '');
    this.#maxObjectBytes = Math.min(MAX_CACHED_OBJECT_BYTES, deps.config.cacheMaxBytes);
    cache.onDatasetDropped((id) => this.#gate.forget(id));
  }

  /** The request target below the gateway base (`/<id>/zarr/<path>`, `/edge/...`). */
  relativePath(target: string): string {
    return gatewayRelativePath(target, this.#basePath);
  }

  async serve(req: GatewayRequest): Promise<GatewayAnswer> {
    const origin = this.#origins.allowed(req.header('origin'));
    const cors: Record<string, string> = origin ? { 'access-control-allow-origin': origin, vary: 'Origin', ...ALLOWED_ORIGIN_HEADERS } : REFUSED_ORIGIN;
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
      return errorAnswer('method_not_allowed', { ...cors, allow: 'GET, HEAD, OPTIONS', 'cache-control': 'no-store' });
    }
    const verdict = parseObjectPath(this.relativePath(req.target));
    if (!verdict.ok) {
      return errorAnswer(verdict.status === 400 ? 'bad_request' : 'not_found', { ...cors, 'cache-control': 'no-store' }, [verdict.reason]);
    }
    if (method === 'OPTIONS') return { status: 204, headers: { ...cors, 'access-control-max-age': '600' }, body: null };

    const { object } = verdict;
    const cached = this.cache.getLocal(object.key) ?? (await this.cache.getShared(object.key));
    if (cached) {
      if (cached.kind === 'missing') return missingAnswer(cors, 'HIT');
      return answerFromBytes(cached, req, cors, 'HIT');
    }
    return this.#miss(object, req, cors);
  }

  /** Forgets a dataset's visibility answer and cached objects, on every instance. */
  async dropDataset(datasetId: string): Promise<void> {
    this.#dropGeneration++;
    this.#gate.forget(datasetId);
    await this.cache.dropDataset(datasetId);
  }

  /** Forgets cached objects by key (`<id>/zarr/<path>`), on every instance. */
  async dropKeys(keys: string[]): Promise<void> {
    await this.cache.dropKeys(keys);
  }

  async close(): Promise<void> {
    await this.cache.close();
  }

  async #miss(object: ObjectPath, req: GatewayRequest, cors: Record<string, string>): Promise<GatewayAnswer> {
    const generation = this.#dropGeneration;
    if (!(await this.#gate.isPublic(object.datasetId))) {
      return errorAnswer('dataset_not_found', { ...cors, 'cache-control': 'no-store', 'x-cache': 'BYPASS' });
    }
    const { objects } = this.#deps;
    const { ttlMs } = cachePolicy(object.path);
    if (req.method === 'HEAD') {
      const info = await objects.head(object.key);
      if (!info) return this.#rememberMissing(object, cors, generation);
      return answerFromStore(info, object, req, cors);
    }
    const found = await objects.get(object.key);
    if (!found) return this.#rememberMissing(object, cors, generation);
    const { info, body } = found;
    if (info.size > this.#maxObjectBytes) {
      body.destroy();
      return answerFromStore(info, object, req, cors, (range) => objects.get(object.key, range));
    }
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const entry: CachedObject = { kind: 'object', body: Buffer.concat(chunks), etag: info.etag, headers: objectHeaders(info, object.path) };
    if (entry.body.length !== info.size) throw new Error(`object ${object.key} changed while it was read`);
    if (generation === this.#dropGeneration) await this.cache.set(object.datasetId, object.key, entry, ttlMs);
    return answerFromBytes(entry, req, cors, 'MISS');
  }

  async #rememberMissing(object: ObjectPath, cors: Record<string, string>, generation: number): Promise<GatewayAnswer> {
    if (generation === this.#dropGeneration) await this.cache.set(object.datasetId, object.key, { kind: 'missing' }, MISSING_TTL_MS);
    return missingAnswer(cors, 'MISS');
  }
}

function missingAnswer(cors: Record<string, string>, verdict: CacheVerdict): GatewayAnswer {
  return errorAnswer('not_found', { ...cors, 'cache-control': 'public, max-age=60', 'x-cache': verdict });
}

/** The range asked for, unless If-Range names another version (RFC 9110 §13.1.5: then the whole object). */
function requestedRange(req: GatewayRequest, etag: string): string | undefined {
  const range = req.header('range');
  if (!range) return undefined;
  const ifRange = req.header('if-range');
  return ifRange === undefined || ifRange === etag ? range : undefined;
}

function notModified(headers: Record<string, string>, cors: Record<string, string>, verdict: CacheVerdict): GatewayAnswer {
  return { status: 304, headers: { ...cors, etag: headers.etag!, 'cache-control': headers['cache-control']!, 'x-cache': verdict }, body: null };
}

function unsatisfiable(size: number, cors: Record<string, string>, verdict: CacheVerdict): GatewayAnswer {
  return errorAnswer('range_not_satisfiable', { ...cors, 'content-range': contentRange(size), 'accept-ranges': 'bytes', 'x-cache': verdict });
}

/** 200, 206, 304 or 416 from an object's bytes in memory. */
function answerFromBytes(entry: CachedObject, req: GatewayRequest, cors: Record<string, string>, verdict: CacheVerdict): GatewayAnswer {
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
        headers: { ...entry.headers, ...cors, 'content-length': String(range.end - range.start + 1), 'content-range': contentRange(size, range), 'x-cache': verdict },
        body: head ? null : entry.body.subarray(range.start, range.end + 1),
      };
    }
  }
  return { status: 200, headers: { ...entry.headers, ...cors, 'x-cache': verdict }, body: head ? null : entry.body };
}

type RangeReader = (range: { start: number; end: number } | undefined) => Promise<{ info: ObjectInfo; body: import('node:stream').Readable } | undefined>;

/** 200, 206, 304 or 416 streamed from the store (HEAD, or an object too large to cache); never cached. */
async function answerFromStore(info: ObjectInfo, object: ObjectPath, req: GatewayRequest, cors: Record<string, string>, read?: RangeReader): Promise<GatewayAnswer> {
  const headers = objectHeaders(info, object.path);
  const inm = req.header('if-none-match');
  if (inm !== undefined && etagMatches(inm, info.etag)) return notModified(headers, cors, 'BYPASS');
  const rangeHeader = requestedRange(req, info.etag);
  const range = rangeHeader === undefined ? null : parseSingleRange(rangeHeader, info.size);
  if (range === 'unsatisfiable') return unsatisfiable(info.size, cors, 'BYPASS');
  const out: Record<string, string> = { ...headers, ...cors, 'x-cache': 'BYPASS' };
  let status = 200;
  if (range) {
    status = 206;
    out['content-length'] = String(range.end - range.start + 1);
    out['content-range'] = contentRange(info.size, range);
  }
  if (!read) return { status, headers: out, body: null };
  const found = await read(range ?? undefined);
  if (!found) return missingAnswer(cors, 'BYPASS');
  return { status, headers: out, body: found.body };
}

const gateways = new WeakMap<Deps, Gateway>();

/**
 * The one gateway of a process (its cache must be shared by the API host's `/zarrproxy` mount and the
 * gateway host): made on first use, with its hooks registered: a dataset that goes private or away is
 * dropped at once, and a conversion's stale metadata too (the edge purge of §6.4 is `edge-purge.ts`).
 */
export function gatewayOf(deps: Deps): Gateway {
  let gateway = gateways.get(deps);
  if (gateway) return gateway;
  const { config, log } = deps;
  const now = () => deps.clock.now().getTime();
  const cache = config.cacheRedisUrl
    ? new RedisCache({ url: config.cacheRedisUrl, maxLocalBytes: config.cacheMaxBytes, log, now })
    : new MemoryCache(config.cacheMaxBytes, now);
  gateway = new Gateway(deps, cache);
  const g = gateway;
  deps.hooks.datasetGone.push((id) => g.dropDataset(id));
  deps.hooks.zarrChanged.push((id, paths) => g.dropKeys(paths.map((p) => `${id}/zarr/${p}`)));
  gateways.set(deps, gateway);
  return gateway;
}

/** Closes the process's gateway (its Redis connections), if one was made. */
export async function closeGateway(deps: Deps): Promise<void> {
  const gateway = gateways.get(deps);
  gateways.delete(deps);
  await gateway?.close();
}
