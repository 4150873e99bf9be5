import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './app-env.js';
import { NdsError } from '../core/errors.js';

/**
 * A router whose request schemas double as validation and OpenAPI documentation.
 * A body, query or path that fails its schema answers `400 validation_failed` with one detail a problem.
 */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const details = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`);
        throw new NdsError('validation_failed', { details });
      }
    },
  });
}
