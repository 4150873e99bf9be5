import type { MiddlewareHandler } from 'hono';

/** Marks every answer below a path as never to be cached (keys, codes, account state), refusals included. */
export function noStore(): MiddlewareHandler {
  return async function noStoreMiddleware(c, next) {
    await next();
    c.header('Cache-Control', 'no-store');
  };
}
