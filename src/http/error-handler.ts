import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { AppEnv } from './app-env.js';
import { NdsError, TokenPollRefusal } from '../core/errors.js';

/** Turns any thrown value into the answer: known errors into their status and body, the rest into a logged 500. */
export function handleError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof NdsError) {
    for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    return c.json(err.toBody(c.var.caller?.user), err.status as 400);
  }
  if (err instanceof TokenPollRefusal) {
    c.header('Cache-Control', 'no-store');
    return c.json(err.toBody(), 400);
  }
  if (err instanceof HTTPException && err.status < 500) {
    const code = err.status === 413 ? 'payload_too_large' : err.status === 404 ? 'not_found' : 'bad_request';
    return c.json(new NdsError(code, { message: err.message || undefined }).toBody(), err.status);
  }
  const requestId = c.var.requestId;
  c.var.deps?.log.error({ err, requestId, method: c.req.method, path: c.req.path }, 'unhandled error');
  return c.json({ error: 'internal_error', message: 'Something went wrong on our side.', details: [`request id ${requestId}`] }, 500);
}

/**
 * The answer to a path no route takes. A page that some callers may not know exists (`/admin`, to anyone but
 * an administrator) answers them this too, byte for byte, so it tells them nothing.
 */
export function unknownRoute(c: Context): Response {
  return c.json(new NdsError('not_found', { message: `No route for ${c.req.method} ${c.req.path}.` }).toBody(), 404);
}
