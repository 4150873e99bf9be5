/**
 * `nds gateway`: the browser gateway alone, for scaling it apart from the API (CONTRACT §1). It reads the
 * database (dataset visibility) and the object store, and serves only the gateway routes, the purge
 * endpoint and `/healthz`, at `/` and at `/zarrproxy`.
 */
import { getRequestListener } from '@hono/node-server';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { Hono } from 'hono';
import type { DatabaseHandle } from '../db/connect.js';
import type { Deps } from '../deps.js';
import type { AppEnv } from '../http/app-env.js';
import { openDeps, type StartOptions } from '../server.js';
import { closeGateway, gatewayOf } from './gateway.js';
import { gatewayRoutes } from './routes.js';

export interface RunningGateway {
  url: string;
  port: number;
  deps: Deps;
  close(): Promise<void>;
}

export async function startGatewayServer(options: StartOptions): Promise<RunningGateway> {
  const { deps, database } = await openDeps(options);
  const app = new Hono<AppEnv>();
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.route('/', gatewayRoutes(deps));
  const viaHono = getRequestListener(app.fetch);
  const gateway = gatewayOf(deps);
  // Object reads skip hono's Request/Response objects (measured: bench/RESULTS.md); the rest goes through it.
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    if (method === 'POST' || req.url === '/healthz') return void viaHono(req, res);
    gateway
      .serve({ method, target: req.url ?? '/', header: (name) => headerOf(req, name) })
      .then((answer) => {
        res.writeHead(answer.status, answer.headers);
        const { body } = answer;
        if (body === null || method === 'HEAD') {
          (body as Readable | null)?.destroy?.();
          res.end();
        } else if (Buffer.isBuffer(body)) res.end(body);
        else body.on('error', () => res.destroy()).pipe(res);
      })
      .catch((err: unknown) => {
        deps.log.error({ err, path: req.url }, 'gateway request failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'internal_error', message: 'Something went wrong on our side.', details: [] }));
      });
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

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}
