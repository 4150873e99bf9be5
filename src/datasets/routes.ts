import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { createRouter } from '../http/router.js';

/** Dataset routes (issue 3). */
export function datasetsRoutes(): OpenAPIHono<AppEnv> {
  return createRouter();
}
