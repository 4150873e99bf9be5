/**
 * CORS rules of the gateway (CONTRACT §6.2.2) as pure functions: which Origin is echoed, and the headers
 * every answer carries. Exact host matching, never a substring test: `x.example.org` is allowed for
 * SERVICE_DOMAIN `example.org`, `evilexample.org` is not.
 */

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

/** Headers of a CORS-allowed answer; an answer to a refused origin gets only `Vary: Origin`. */
export const ALLOWED_ORIGIN_HEADERS = {
  'access-control-expose-headers': 'ETag, Content-Length, Content-Range, Accept-Ranges',
  'access-control-allow-headers': 'Range',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
} as const;

/**
 * Remembers origin verdicts so the hot path does not parse a URL per request. Bounded: it forgets everything
 * when full, since a flood of distinct Origin values must not grow memory.
 */
export class OriginPolicy {
  readonly #serviceDomain: string;
  readonly #verdicts = new Map<string, string | undefined>();

  constructor(serviceDomain: string) {
    this.#serviceDomain = serviceDomain;
  }

  allowed(origin: string | undefined): string | undefined {
    if (!origin) return undefined;
    if (this.#verdicts.has(origin)) return this.#verdicts.get(origin);
    const verdict = allowedOrigin(origin, this.#serviceDomain);
    if (this.#verdicts.size >= 1000) this.#verdicts.clear();
    this.#verdicts.set(origin, verdict);
    return verdict;
  }
}
