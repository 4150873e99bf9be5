/**
 * CORS rules of the gateway (docs/gateway.md) as pure functions: which Origin is echoed, and the headers
 * every answer carries. Exact host matching, never a substring test: `x.example.org` is allowed for
 * SERVICE_DOMAIN `example.org`, `evilexample.org` is not.
 */
import type { HeaderList } from './object-answers.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The Origin to echo in `Access-Control-Allow-Origin`, or undefined when the origin is not allowed. */
export function allowedOrigin(origin: string | undefined, serviceDomain: string): string | undefined {
  if (!origin) return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  // An Origin is exactly scheme://host[:port]; anything else (a path, user info, "null") is refused.
  if (url.origin !== origin || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  const host = url.hostname;
  if (LOOPBACK.has(host)) return origin;
  const domain = serviceDomain.toLowerCase();
  if (host === domain || host.endsWith(`.${domain}`)) return origin;
  return undefined;
}

/** CORS headers of an answer to a refused (or absent) origin: only `Vary: Origin`. */
export const REFUSED_ORIGIN_HEADERS: HeaderList = Object.freeze(['vary', 'Origin']);

/** CORS headers of an answer to an allowed origin (docs/gateway.md). */
export function allowedOriginHeaders(origin: string): HeaderList {
  return Object.freeze([
    'access-control-allow-origin', origin,
    'vary', 'Origin',
    'access-control-expose-headers', 'ETag, Content-Length, Content-Range, Accept-Ranges',
    // Authorization: a private preview's read grant (read-grant.ts).
    'access-control-allow-headers', 'Range, Authorization',
    'access-control-allow-methods', 'GET, HEAD, OPTIONS',
  ]);
}

/**
 * Remembers the CORS headers of each origin seen, so the hot path neither parses a URL nor builds a header
 * list per request. Bounded: it forgets everything when full, since a flood of distinct Origin values must
 * not grow memory.
 */
export class OriginPolicy {
  readonly #serviceDomain: string;
  readonly #verdicts = new Map<string, HeaderList>();

  constructor(serviceDomain: string) {
    this.#serviceDomain = serviceDomain;
  }

  /** The CORS headers of an answer to a request with this Origin. */
  headers(origin: string | undefined): HeaderList {
    if (!origin) return REFUSED_ORIGIN_HEADERS;
    let headers = this.#verdicts.get(origin);
    if (headers) return headers;
    const allowed = allowedOrigin(origin, this.#serviceDomain);
    headers = allowed === undefined ? REFUSED_ORIGIN_HEADERS : allowedOriginHeaders(allowed);
    if (this.#verdicts.size >= 1000) this.#verdicts.clear();
    this.#verdicts.set(origin, headers);
    return headers;
  }
}
