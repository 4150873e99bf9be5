/**
 * Builds the HTTP application: shared middleware, then each domain's routes. Reads like a table of contents.
 */
import { Hono } from 'hono';
import { randomUUID } from 'node:crypto';
import { accountsRoutes } from './routes/account-routes.js';
import { adminRoutes } from './routes/admin-routes.js';
import { conversionRoutes } from './routes/conversion-routes.js';
import { datasetsRoutes } from './routes/dataset-routes.js';
import { searchRoutes } from './routes/search-routes.js';
import { publicationRoutes } from './routes/publication-routes.js';
import { sandboxRoutes } from './routes/sandbox-routes.js';
import { gatewayHostOf, gatewayRoutes } from './routes/gateway-routes.js';
import { gitRoutes } from './routes/git-routes.js';
import type { AppEnv, ServerDeps } from './http/app-env.js';
import { handleError } from './http/error-handler.js';
import { NdsError } from './core/errors.js';
import { objectRoutes } from './routes/object-routes.js';
import { createRouter } from './http/router.js';
import { webRoutes } from './web/routes.js';
import { datasetPagesNegotiation } from './web/dataset-pages.js';

export function createApp(deps: ServerDeps): Hono<AppEnv> {
  const app = createRouter();

  app.use(async function context(c, next) {
    c.set('deps', deps);
    c.set('requestId', c.req.header('x-request-id')?.slice(0, 64) ?? randomUUID());
    const started = performance.now();
    await next();
    if (c.res.status >= 500) {
      deps.log.warn({ requestId: c.var.requestId, method: c.req.method, path: c.req.path, status: c.res.status }, 'request failed');
    } else if (deps.log.isLevelEnabled('debug')) {
      deps.log.debug({ method: c.req.method, path: c.req.path, status: c.res.status, ms: +(performance.now() - started).toFixed(1) }, 'request');
    }
  });

  // The production gateway has its own host name; its requests go straight to the gateway routes.
  const gateway = gatewayRoutes(deps.gateway, deps.config);
  const gatewayHost = gatewayHostOf(deps.config);
  app.use(async function gatewayHostRequests(c, next) {
    if (gatewayHost !== null && c.req.header('host')?.toLowerCase() === gatewayHost) return gateway.fetch(c.req.raw, c.env);
    await next();
  });

  app.get('/healthz', (c) => c.json({ ok: true }));
  app.route('/', accountsRoutes());
  app.route('/admin', adminRoutes());
  // Before the dataset routes, so that /datasets/search is never read as a dataset id.
  app.route('/', searchRoutes());
  app.route('/', publicationRoutes());
  app.route('/', sandboxRoutes());
  // Browsers asking for HTML on /datasets and /datasets/<id> get the pages; API clients get JSON.
  app.use(datasetPagesNegotiation());
  app.route('/', datasetsRoutes());
  app.route('/', objectRoutes());
  app.route('/', conversionRoutes());
  app.route('/', gitRoutes());
  app.route('/zarrproxy', gateway);
  app.route('/', webRoutes());

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'nds API', version: '1', description: 'Neuro Dataset Service: datasets, accounts, API keys, device sign-in, Zarr serving copy.' },
    servers: [{ url: deps.config.publicUrl }],
  });

  app.notFound((c) => c.json(new NdsError('not_found', { message: `No route for ${c.req.method} ${c.req.path}.` }).toBody(), 404));
  app.onError(handleError);
  return app;
}
