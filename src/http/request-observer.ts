/**
 * Wraps a process's `node:http` request listener (`nds serve`, `nds gateway`, `nds worker`'s probe port) so
 * that every request is served within its `RequestContext` (its id in every log line, answered as
 * `X-Request-Id`), ends in one `info` access line, and is counted in `nds_http_request_duration_seconds`; and
 * answers `GET /metrics` (`metrics-endpoint.ts`) before the listener sees it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../core/log.js';
import type { Metrics } from '../core/metrics.js';
import { requestIdFrom, serveWithin, type RequestContext } from '../core/request-context.js';
import { answerMetrics, isMetricsRequest, metricsOf, type MetricsListener } from './metrics-endpoint.js';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface ObserverOptions {
  log: Logger;
  metrics: Metrics;
  /** METRICS_TOKEN: the bearer token `/metrics` wants; undefined = readable on METRICS_PORT from this machine only. */
  metricsToken: string | undefined;
  /** `metrics-port` for the METRICS_PORT listener (token-less reads from this machine); default `service` (token only). */
  listener?: MetricsListener;
  /** The metrics `/metrics` answers; default this process's (the gateway cluster sums its workers'). */
  readMetrics?: () => Promise<{ text: string; contentType: string }>;
}

/** The label of a request no route took. */
export const UNMATCHED_ROUTE = 'unmatched';

export function observeRequests(listener: RequestListener, options: ObserverOptions): RequestListener {
  const { log, metrics } = options;
  const readMetrics = options.readMetrics ?? metricsOf(metrics);
  return (req, res) => {
    const started = performance.now();
    // Held here: by 'close' the request may have let go of its socket (req.socket is then null).
    const socket = req.socket;
    const sentBefore = socket.bytesWritten;
    const context: RequestContext = { requestId: requestIdFrom(req.headers['x-request-id']), route: undefined };
    res.setHeader('x-request-id', context.requestId);
    res.once('close', () => {
      const seconds = (performance.now() - started) / 1000;
      // A client that went away before the answer was sent: nginx's 499.
      const status = res.writableFinished ? res.statusCode : 499;
      const route = context.route ?? UNMATCHED_ROUTE;
      const method = req.method ?? 'GET';
      metrics.requests.observe({ method, route, status: String(status) }, seconds);
      log.info({ requestId: context.requestId, method, route, status, ms: +(seconds * 1000).toFixed(1), bytes: socket.bytesWritten - sentBefore }, 'request');
    });
    serveWithin(context, () => {
      if (isMetricsRequest(req)) {
        context.route = '/metrics';
        answerMetrics(req, res, { token: options.metricsToken, listener: options.listener ?? 'service' }, readMetrics).catch((err: unknown) => {
          log.error({ err }, 'metrics could not be read');
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
        return;
      }
      listener(req, res);
    });
  };
}
