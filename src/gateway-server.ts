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
import type { Metrics } from './core/metrics.js';
import { currentRequest } from './core/request-context.js';
import { observeRequests } from './http/request-observer.js';
import type { Deps } from './deps.js';
import type { AppEnv } from './http/app-env.js';
import type { Gateway, GatewayRequest } from './gateway/gateway.js';
import type { GatewayAnswer } from './gateway/object-answers.js';
import type { DropChannel } from './gateway/relayed-cache.js';
import { closeDeps, closeHttpServer, keepConnectionsAlive, openDeps, openGateway, openMetricsPort, PROCESS_PARTS, type OpenOptions } from './lifecycle.js';
import { gatewayRoutes } from './routes/gateway-routes.js';
import { healthOf, readinessOf } from './routes/health-routes.js';

export interface RunningGateway {
  url: string;
  port: number;
  /** Where METRICS_PORT answers `/metrics`, `/healthz` and `/readyz`; undefined without METRICS_PORT. */
  metricsUrl: string | undefined;
  deps: Deps;
  gateway: Gateway;
  close(): Promise<void>;
}

export interface GatewayServerOptions extends OpenOptions {
  /** Listen address; defaults to all interfaces. */
  hostname?: string;
  /** Set in a worker of several (`gateway-cluster.ts`) without Redis: carries cache drops to the others. */
  peers?: DropChannel;
  /** What `/metrics` answers; default this process's metrics (a worker of several answers the sum of all). */
  readMetrics?: () => Promise<{ text: string; contentType: string }>;
}

export async function startGatewayServer(options: GatewayServerOptions): Promise<RunningGateway> {
  const opened = await openDeps({ kind: 'gateway', ...options }, PROCESS_PARTS.gateway);
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
  const { metrics } = deps;
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const served = currentRequest();
    if (method === 'POST' || req.url === '/healthz' || req.url === '/readyz') {
      if (served) served.route = method === 'POST' ? 'gateway purge' : req.url;
      return void viaHono(req, res);
    }
    if (served) served.route = 'gateway';
    try {
      const request = new NodeGatewayRequest(req, method);
      const now = gateway.answerNow(request);
      if (now) return writeAnswer(res, method, now, metrics);
      gateway
        .serve(request)
        .then((answer) => writeAnswer(res, method, answer, metrics))
        .catch((err: unknown) => failed(deps, req, res, err));
    } catch (err) {
      failed(deps, req, res, err);
    }
  };
  const server = createServer(observeRequests(listener, { log: deps.log, metrics, metricsToken: options.config.metricsToken, readMetrics: options.readMetrics }));
  keepConnectionsAlive(server, options.config);
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
  const close = () => (closing ??= closeHttpServer(server).then(() => closeDeps(opened)));
  // Opened after PORT: the cluster's primary counts a worker's first port only.
  const metricsPort = options.config.metricsPort;
  const metricsUrl = metricsPort === undefined ? undefined : await openMetricsPort(opened, metricsPort, options.readMetrics).catch(async (err: unknown) => {
    await close();
    throw err;
  });
  return {
    url: `http://localhost:${port}`,
    port,
    metricsUrl,
    deps,
    gateway,
    close,
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

function writeAnswer(res: ServerResponse, method: string, answer: GatewayAnswer, metrics: Metrics): void {
  // A flat list is written as is; an object's keys would be walked and checked one by one.
  res.writeHead(answer.status, answer.headers as string[]);
  const { body } = answer;
  const verdict = cacheVerdict(answer.headers as string[]);
  if (verdict !== undefined) {
    metrics.gatewayAnswers.inc({ cache: verdict });
    if (Buffer.isBuffer(body) && method !== 'HEAD') metrics.gatewayBytes.inc({ cache: verdict }, body.length);
    else if (body !== null && method !== 'HEAD' && !Buffer.isBuffer(body)) body.on('data', (chunk: Buffer) => metrics.gatewayBytes.inc({ cache: verdict }, chunk.length));
  }
  if (body === null || method === 'HEAD') {
    (body as Readable | null)?.destroy?.();
    res.end();
  } else if (Buffer.isBuffer(body)) res.end(body);
  else body.on('error', () => res.destroy()).pipe(res);
}

/** The `X-Cache` verdict of an answer (HIT, MISS, BYPASS), written last in its header list; undefined for refusals. */
function cacheVerdict(headers: string[]): string | undefined {
  for (let i = headers.length - 2; i >= 0; i -= 2) if (headers[i] === 'x-cache') return headers[i + 1];
  return undefined;
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
