/**
 * Builds the HTTP application: shared middleware, then every route module. Reads like a table of contents:
 * each module is a list of declared routes (`http/route.ts`), mounted and documented here.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Hono } from 'hono';
import { matchedRoutes } from 'hono/route';
import { currentRequest, requestIdFrom, serveWithin } from './core/request-context.js';
import { SESSION_COOKIE } from './accounts/sessions.js';
import type { AppEnv, ServerDeps } from './http/app-env.js';
import { handleError, unknownRoute } from './http/error-handler.js';
import { UNMATCHED_ROUTE } from './http/request-observer.js';
import { noStore } from './http/no-store.js';
import { securityHeaders } from './http/security-headers.js';
import { mountRoutes, route, type Route } from './http/route.js';
import { accountRoutes } from './routes/account-routes.js';
import { adminRoutes } from './routes/admin-routes.js';
import { browserSignInRoutes } from './routes/browser-sign-in-routes.js';
import { contentRoutes } from './routes/content-routes.js';
import { multipartUploadRoutes } from './routes/multipart-upload-routes.js';
import { conversionRoutes } from './routes/conversion-routes.js';
import { datasetRoutes } from './routes/dataset-routes.js';
import { memberRoutes } from './routes/member-routes.js';
import { annotationRoutes } from './routes/annotation-routes.js';
import { deprecatedRoutes } from './routes/deprecated-routes.js';
import { deviceRoutes } from './routes/device-routes.js';
import { setupRoutes } from './routes/setup-routes.js';
import { gatewayHostOf, gatewayRoutes } from './routes/gateway-routes.js';
import { gitRoutes } from './routes/git-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { mcpRoutes } from './mcp/mcp-routes.js';
import { objectRoutes } from './routes/object-routes.js';
import { publicationRoutes } from './routes/publication-routes.js';
import { readGrantRoutes } from './routes/read-grant-routes.js';
import { sandboxRoutes } from './routes/sandbox-routes.js';
import { searchRoutes } from './routes/search-routes.js';
import { recordingRoutes } from './routes/recording-routes.js';
import { signalRoutes } from './routes/signal-routes.js';
import { windowRoutes } from './routes/window-routes.js';
import { accountPages } from './web/account-pages.js';
import { adminPages } from './web/admin-page.js';
import { assetRoutes } from './web/assets.js';
import { datasetPages } from './web/dataset-pages.js';
import { datasetSettingsPages } from './web/dataset-settings-page.js';
import { devicePages } from './web/device-page.js';
import { homePages } from './web/home-page.js';
import { signInPages } from './web/sign-in-pages.js';
import { viewerBundleRoutes } from './web/viewer-bundle.js';

/** Every route of `nds serve`, in the order they are matched; the gateway's own mount comes last. */
export function appRoutes(gateway: Hono<AppEnv>): Route[] {
  return [
    ...healthRoutes,
    ...accountRoutes,
    ...browserSignInRoutes,
    ...deviceRoutes,
    ...deprecatedRoutes,
    ...adminRoutes,
    // Before the dataset routes, so that /datasets/search is never read as a dataset id.
    ...searchRoutes,
    ...recordingRoutes,
    ...signalRoutes,
    ...windowRoutes,
    ...mcpRoutes,
    ...datasetRoutes,
    ...datasetPages,
    ...homePages,
    ...datasetSettingsPages,
    ...contentRoutes,
    ...multipartUploadRoutes,
    ...memberRoutes,
    ...annotationRoutes,
    ...publicationRoutes,
    ...readGrantRoutes,
    ...sandboxRoutes,
    ...conversionRoutes,
    ...objectRoutes,
    ...gitRoutes,
    ...signInPages,
    ...accountPages,
    ...adminPages,
    ...devicePages,
    ...setupRoutes,
    ...assetRoutes,
    ...viewerBundleRoutes,
    route({
      method: 'all',
      path: '/zarrproxy/*',
      summary: 'The browser gateway for Zarr data (docs/gateway.md)',
      access: 'none',
      undocumented: true,
      rawBody: 'a purge request',
      rawTarget: true,
      handler: (c) => gateway.fetch(c.req.raw, c.env),
    }),
  ];
}

export function createApp(deps: ServerDeps): Hono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>();

  app.use(async function context(c, next) {
    c.set('deps', deps);
    // Served through `http/request-observer.ts` (a process), the request has its context already; called
    // directly (`app.request()`), it gets one here.
    const request = currentRequest() ?? { requestId: requestIdFrom(c.req.header('x-request-id')), route: undefined };
    c.set('requestId', request.requestId);
    await serveWithin(request, next);
    c.header('X-Request-Id', request.requestId);
    request.route = routeLabel(c);
    if (c.res.status >= 500) deps.log.warn({ method: c.req.method, route: request.route, status: c.res.status }, 'request failed');
  });

  // The production gateway has its own host name; its requests go straight to the gateway routes.
  const gateway = gatewayRoutes(deps.gateway, deps.config);
  const gatewayHost = gatewayHostOf(deps.config);
  app.use(async function gatewayHostRequests(c, next) {
    if (gatewayHost !== null && c.req.header('host')?.toLowerCase() === gatewayHost) return gateway.fetch(c.req.raw, c.env);
    await next();
  });

  // Content-Security-Policy, framing, nosniff, referrer and HSTS of every answer but the gateway's.
  app.use(securityHeaders(deps.config));

  // Answers of these routes can carry keys, codes or account state: never cached.
  app.use('/auth/*', noStore());
  app.use('/admin/*', noStore());
  // An answer to a signed-in request may hold what only that caller may read (a private dataset, its members):
  // no shared cache in front of nds (a CDN, a proxy) may keep it for someone else. Routes that say otherwise
  // (the gateway's public objects, no-store answers) keep their own.
  app.use(async function privateToCaller(c, next) {
    await next();
    const signedIn = c.req.header('authorization') !== undefined || (c.req.header('cookie') ?? '').includes(`${SESSION_COOKIE}=`);
    if (signedIn && !c.res.headers.has('cache-control')) c.header('Cache-Control', 'private');
  });

  mountRoutes(app, appRoutes(gateway));
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer', description: 'An nds API key (`nds_...`)' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'session', { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE, description: 'A browser session' });

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'nds API', version: '1', description: 'Neuro Dataset Service: datasets, accounts, API keys, device sign-in, Zarr serving copy.' },
    servers: [{ url: deps.config.publicUrl }],
  });

  app.notFound(unknownRoute);
  app.onError(handleError);
  return app;
}

/** The pattern of the route that answered (`/datasets/:id`), for logs and metrics: never the path, which may name a private dataset. */
function routeLabel(c: Context<AppEnv>): string {
  const path = matchedRoutes(c)[c.req.routeIndex]?.path;
  return path === undefined || path === '*' || path === '/*' ? UNMATCHED_ROUTE : withoutPatterns(path);
}

/** A route path without its parameters' patterns: `/datasets/:id{[ns][db][0-9]+}` → `/datasets/:id`. */
function withoutPatterns(path: string): string {
  let out = '';
  let depth = 0;
  for (const ch of path) {
    if (ch === '{') depth++;
    else if (ch === '}') depth--;
    else if (depth === 0) out += ch;
  }
  return out;
}
