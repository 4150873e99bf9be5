import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { createRouter } from '../http/router.js';

export function deprecatedRoutes(): OpenAPIHono<AppEnv> {
  return createRouter();
}
