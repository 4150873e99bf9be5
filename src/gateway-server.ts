/**
 * `nds gateway`: the browser gateway alone, for scaling it apart from the API (docs/architecture.md). It reads the
 * database (dataset visibility) and the object store, and serves only the gateway routes, the purge
 * endpoint, `/healthz` and `/readyz`, at `/` and at `/zarrproxy`.
 */
import { getRequestListener } from '@hono/node-server';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Hono } from 'hono';
import { NdsError } from './core/errors.js';
import type { Deps } from './deps.js';
import type { AppEnv } from './http/app-env.js';
import type { Gateway, GatewayRequest } from './gateway/gateway.js';
import type { GatewayAnswer } from './gateway/object-answers.js';
import type { DropChannel } from './gateway/relayed-cache.js';
import { closeDeps, closeHttpServer, openDeps, openGateway, PROCESS_PARTS, type OpenOptions } from './lifecycle.js';
import { gatewayRoutes } from './routes/gateway-routes.js';
import { healthOf, readinessOf } from './routes/health-routes.js';

export interface RunningGateway {
  url: string;
  port: number;
  deps: Deps;
  gateway: Gateway;
  close(): Promise<void>;
}

export interface GatewayServerOptions extends OpenOptions {
  /** Listen address; defaults to all interfaces. */
  hostname?: string;
  /** Set in a worker of several (`gateway-cluster.ts`) without Redis: carries cache drops to the others. */
  peers?: DropChannel;
}

export async function startGatewayServer(options: GatewayServerOptions): Promise<RunningGateway> {
  const opened = await openDeps(options, PROCESS_PARTS.gateway);
  const { deps } = opened;
  const gateway = openGateway(opened, options.peers);
  const app = new Hono<AppEnv>();
  app.get('/healthz', async (c) => c.json(await healthOf(deps.db)));
  app.get('/readyz', async (c) => {
    const { status, body, headers } = await readinessOf(deps.db);
    return c.json(body, status, headers);
  });
  app.route('/', gatewayRoutes(gateway, deps.config));
  const viaHono = getRequestListener(app.fetch);
  // Object reads skip hono's Request/Response objects, and a hit in this process is written in the same
  // turn, without a promise (measured: bench/RESULTS.md); the rest goes through hono.
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    if (method === 'POST' || req.url === '/healthz' || req.url === '/readyz') return void viaHono(req, res);
    try {
      const request = new NodeGatewayRequest(req, method);
      const now = gateway.answerNow(request);
      if (now) return writeAnswer(res, method, now);
      gateway
        .serve(request)
        .then((answer) => writeAnswer(res, method, answer))
        .catch((err: unknown) => failed(deps, req, res, err));
    } catch (err) {
      failed(deps, req, res, err);
    }
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.config.port, options.hostname, resolve);
    });
  } catch (err) {
    await closeDeps(opened);
    throw err;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.config.port;
  let closing: Promise<void> | undefined;
  return {
    url: `http://localhost:${port}`,
    port,
    deps,
    gateway,
    close() {
      closing ??= closeHttpServer(server).then(() => closeDeps(opened));
      return closing;
    },
  };
}

/**
 * A known error (the database cannot answer: 503 with Retry-After) as its answer; anything else a 500 in the
 * API's error shape, whose cause goes to the log only.
 */
function failed(deps: Deps, req: IncomingMessage, res: ServerResponse, err: unknown): void {
  if (err instanceof NdsError) {
    if (!res.headersSent) res.writeHead(err.status, { ...err.headers, 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
    res.end(JSON.stringify(err.toBody()));
    return;
  }
  deps.log.error({ err, path: req.url }, 'gateway request failed');
  if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
  res.end(JSON.stringify({ error: 'internal_error', message: 'Something went wrong on our side.', details: [] }));
}

function writeAnswer(res: ServerResponse, method: string, answer: GatewayAnswer): void {
  // A flat list is written as is; an object's keys would be walked and checked one by one.
  res.writeHead(answer.status, answer.headers as string[]);
  const { body } = answer;
  if (body === null || method === 'HEAD') {
    (body as Readable | null)?.destroy?.();
    res.end();
  } else if (Buffer.isBuffer(body)) res.end(body);
  else body.on('error', () => res.destroy()).pipe(res);
}

/** A node:http request as the gateway reads it; a class, so no closure is made per request. */
class NodeGatewayRequest implements GatewayRequest {
  readonly method: string;
  readonly target: string;
  readonly #req: IncomingMessage;

  constructor(req: IncomingMessage, method: string) {
    this.#req = req;
    this.method = method;
    this.target = req.url ?? '/';
  }

  header(name: string): string | undefined {
    const v = this.#req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }
}
