import { Hono } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { accountPages } from './account-pages.js';
import { assetRoutes } from './assets.js';
import { datasetPages } from './dataset-pages.js';

/** Server-rendered browser pages and their static assets. */
export function webRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.route('/', assetRoutes());
  app.route('/', accountPages());
  app.route('/', datasetPages());
  return app;
}
