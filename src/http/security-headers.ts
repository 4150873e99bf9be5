/**
 * The security headers of every answer of `nds serve` (docs/security.md, "Headers"), set by hono's
 * secure-headers once the answer is known, since what it is decides the policy:
 * - a page (HTML) gets a Content-Security-Policy under which nothing inline runs or styles, and may not be
 *   framed (`frame-ancestors 'none'`, `X-Frame-Options: DENY`);
 * - a page that runs the signal viewer (marked by `servesViewer`) gets the same policy: its zstd decoder is
 *   plain JavaScript and evaluates nothing (decision 0022); the viewer alone (`?embed=1`) may be framed by
 *   `VIEWER_FRAME_ANCESTORS`;
 * - anything else (JSON, assets, objects, git) gets a policy that loads and runs nothing, in a sandbox, so a
 *   stored file served with an HTML type cannot act as a page of the service.
 * Every answer gets `nosniff`, the referrer policy, and HSTS when `PUBLIC_URL` is https. The gateway mount
 * (`/zarrproxy`) is left as `nds gateway` answers alone: it sets its own `nosniff` (`gateway/object-answers.ts`).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import type { Config } from '../core/config.js';
import type { AppEnv } from './app-env.js';

/**
 * `strict-origin`: no path or query (setup tokens, device codes, key-regeneration links) ever leaves a page
 * in a Referer, not even to this service's own logs. `no-referrer` would do the same but makes browsers send
 * `Origin: null` with the pages' own form posts, which the own-Origin rule then refuses.
 */
export const REFERRER_POLICY = 'strict-origin';

/** One year; no `includeSubDomains`, which would bind every other host under the service's domain. */
export const HSTS = 'max-age=31536000';

/** Paths whose answers are stored bytes with the type their uploader gave: never given a page's policy. */
const STORED_CONTENT = /^\/(?:objects|git)\//;

/** The origins the viewer's scripts read besides the page's own: the gateway and the public objects. */
export function dataOrigins(config: Pick<Config, 'zarrCacheBaseUrl' | 'zarrPublicBaseUrl'>): string[] {
  const origins = new Set([new URL(config.zarrCacheBaseUrl).origin]);
  if (config.zarrPublicBaseUrl) origins.add(new URL(config.zarrPublicBaseUrl).origin);
  return [...origins];
}

/**
 * The Content-Security-Policy directives of a page, the viewer's included (its codec evaluates nothing since
 * decision 0022's note). `frameAncestors` says who may frame it.
 */
export function pagePolicy(config: Pick<Config, 'zarrCacheBaseUrl' | 'zarrPublicBaseUrl'>, options: { frameAncestors: string[] }) {
  return {
    defaultSrc: ["'self'"],
    // No page runs inline script or evaluates code: the viewer's zstd decoder is plain JavaScript (fzstd).
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    // `data:` for the empty favicon of the dataset pages (no /favicon.ico request).
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'", ...dataOrigins(config)],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: options.frameAncestors,
  };
}

/** The policy of every answer that is not a page: it loads nothing, runs nothing and is not framed. */
export const OTHER_POLICY = { defaultSrc: ["'none'"], frameAncestors: ["'none'"], sandbox: [] };

/**
 * Marks this answer as a page of the signal viewer; `embed`: the viewer alone, which `VIEWER_FRAME_ANCESTORS`
 * may frame instead of nobody.
 */
export function servesViewer(c: Context<AppEnv>, options: { embed: boolean }): void {
  c.set('viewerPage', options.embed ? 'embed' : 'page');
}

/** The middleware that sets them; built once, it only picks one of four header sets per answer. */
export function securityHeaders(config: Config): MiddlewareHandler<AppEnv> {
  const common = {
    referrerPolicy: REFERRER_POLICY,
    strictTransportSecurity: config.publicUrl.startsWith('https:') ? HSTS : false,
    xContentTypeOptions: true,
  } as const;
  const framedByNobody = { xFrameOptions: 'DENY', crossOriginResourcePolicy: 'same-origin' } as const;
  const page = secureHeaders({ ...common, ...framedByNobody, contentSecurityPolicy: pagePolicy(config, { frameAncestors: ["'none'"] }) });
  const viewer = page;
  // X-Frame-Options cannot name origins: the embed leaves it out and relies on frame-ancestors.
  const embed = secureHeaders({
    ...common,
    contentSecurityPolicy: pagePolicy(config, { frameAncestors: config.viewerFrameAncestors }),
    xFrameOptions: false,
    crossOriginResourcePolicy: 'cross-origin',
  });
  const other = secureHeaders({
    ...common,
    contentSecurityPolicy: OTHER_POLICY,
    xFrameOptions: 'DENY',
    // Answers other than pages keep what they had: the API and objects are read across origins.
    crossOriginResourcePolicy: false,
    crossOriginOpenerPolicy: false,
    originAgentCluster: false,
  });
  const answered = async () => {};
  return async function securityHeadersMiddleware(c, next) {
    await next();
    const path = c.req.path;
    if (path.startsWith('/zarrproxy/')) return;
    const isPage = (c.res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/html') && !STORED_CONTENT.test(path);
    const viewerPage = c.var.viewerPage;
    await (!isPage ? other : viewerPage === 'embed' ? embed : viewerPage === 'page' ? viewer : page)(c, answered);
  };
}
