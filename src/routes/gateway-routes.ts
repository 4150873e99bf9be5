import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Hono } from 'hono';
import type { Config } from '../core/config.js';
import { NdsError } from '../core/errors.js';
import type { AppEnv } from '../http/app-env.js';
import { handleError } from '../http/error-handler.js';
import { readBodyBytes } from '../http/request-input.js';
import type { Gateway, GatewayRequest } from '../gateway/gateway.js';
import { headerRecord, type GatewayAnswer } from '../gateway/object-answers.js';
import { handlePurge, purgeBodyTooLarge, purgeZone } from '../gateway/purge-endpoint.js';

/**
 * The browser gateway for Zarr data (docs/gateway.md) as a hono app: mounted at `/zarrproxy` and, by Host, at
 * `/` by `nds serve`, and run alone by `nds gateway`. Routing is the gateway's own (it judges the raw
 * target, before any normalisation), so this app has one catch-all route.
 */
export function gatewayRoutes(gateway: Gateway, config: Config): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.all('*', async function gatewayRequest(c) {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const target = incoming?.url ?? rawTargetOf(c.req.url);
    const zone = c.req.method === 'POST' ? purgeZone(gateway.relativePath(target)) : undefined;
    if (zone !== undefined) {
      const bytes = await readBodyBytes(c, PURGE_BODY_BYTES).catch((err: unknown) => {
        if (err instanceof NdsError && err.code === 'payload_too_large') return undefined;
        throw err;
      });
      const answer = bytes === undefined ? purgeBodyTooLarge(PURGE_BODY_BYTES) : await handlePurge(config, gateway, zone, c.req.header('authorization'), parseJson(bytes));
      return c.json(answer.body, answer.status as 200);
    }
    const request: GatewayRequest = {
      method: c.req.method,
      target,
      // Node has parsed the headers already; a web `Headers` would be built just to read three of them.
      header: incoming ? (name) => headerOf(incoming, name) : (name) => c.req.header(name),
    };
    return toResponse(await gateway.serve(request));
  });
  app.onError(handleError);
  return app;
}

/** A purge names at most a few thousand keys or prefixes. */
const PURGE_BODY_BYTES = 1024 * 1024;

/** The body's JSON, or undefined when it is none (the purge endpoint answers that with its own error). */
function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return undefined;
  }
}

function headerOf(incoming: IncomingMessage, name: string): string | undefined {
  const v = incoming.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function rawTargetOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/** A buffer body and plain headers take @hono/node-server's direct path (no web stream, no `Headers`). */
export function toResponse(answer: GatewayAnswer): Response {
  const { body } = answer;
  const payload: BodyInit | null = body === null ? null : Buffer.isBuffer(body) ? (body as Uint8Array<ArrayBuffer>) : (Readable.toWeb(body) as WebReadableStream as unknown as ReadableStream);
  return new Response(payload, { status: answer.status, headers: headerRecord(answer.headers) });
}

/** The gateway's own host name when it differs from the API's (then requests to it are gateway requests). */
export function gatewayHostOf(config: Config): string | null {
  const own = new URL(config.zarrCacheBaseUrl).host.toLowerCase();
  return own === new URL(config.publicUrl).host.toLowerCase() ? null : own;
}
