/**
 * `nds gateway`: the browser gateway alone, for scaling it apart from the API (CONTRACT §1). It reads the
 * database (dataset visibility) and the object store, and serves only the gateway routes, the purge
 * endpoint and `/healthz`, at `/` and at `/zarrproxy`.
 */
import { getRequestListener } from '@hono/node-server';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Hono } from 'hono';
import type { DatabaseHandle } from './db/connect.js';
import type { Deps } from './deps.js';
import type { AppEnv } from './http/app-env.js';
import { openDeps, type StartOptions } from './server.js';
import { closeGateway, gatewayOf, type GatewayRequest } from './gateway/gateway.js';
import type { GatewayAnswer } from './gateway/object-answers.js';
import type { DropChannel } from './gateway/relayed-cache.js';
import { gatewayRoutes } from './routes/gateway-routes.js';

export interface RunningGateway {
  url: string;
  port: number;
  deps: Deps;
  close(): Promise<void>;
}

export interface GatewayServerOptions extends StartOptions {
  /** Set in a worker of several (`gateway-cluster.ts`) without Redis: carries cache drops to the others. */
  peers?: DropChannel;
}

export async function startGatewayServer(options: GatewayServerOptions): Promise<RunningGateway> {
  const { deps, database } = await openDeps(options);
  const gateway = gatewayOf(deps, options.peers);
  const app = new Hono<AppEnv>();
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.route('/', gatewayRoutes(deps));
  const viaHono = getRequestListener(app.fetch);
  // Object reads skip hono's Request/Response objects, and a hit in this process is written in the same
  // turn, without a promise (measured: bench/RESULTS.md); the rest goes through hono.
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    if (method === 'POST' || req.url === '/healthz') return void viaHono(req, res);
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
  await new Promise<void>((resolve) => server.listen(options.config.port, options.hostname, resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.config.port;
  return { url: `http://localhost:${port}`, port, deps, close: () => stop(server, deps, database) };
}

async function stop(server: Server, deps: Deps, database: DatabaseHandle): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), 5000);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    server.closeIdleConnections();
  });
  await closeGateway(deps);
  await deps.mailer.close();
  await deps.objects.close();
  await database.close();
}

/** A 500 in the API's error shape; the cause goes to the log only. */
function failed(deps: Deps, req: IncomingMessage, res: ServerResponse, err: unknown): void {
  deps.log.error({ err, path: req.url }, 'gateway request failed');
  if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
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
