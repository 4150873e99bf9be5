/**
 * `GET /metrics` of every nds process (docs/operating.md, decisions 0025 and 0058). Metrics name no dataset, but
 * they tell load, failures and versions, so they are not for everyone: with `METRICS_TOKEN` set, a request must
 * carry it as a bearer token, on any port. Without it, the service's own port (`PORT`) answers nobody: a reverse
 * proxy on the same host makes every stranger's request look local (nginx's plain `proxy_pass` sends no
 * `X-Forwarded-For` and a loopback `Host`). Only the `METRICS_PORT` listener, which no proxy is pointed at,
 * answers a client on this machine that came through no proxy and that named this machine: a web page whose
 * own name its author points at 127.0.0.1 (DNS rebinding) makes the visitor's browser send requests from
 * loopback, but under the page's name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NdsError } from '../core/errors.js';
import type { Metrics } from '../core/metrics.js';
import { constantTimeEqual } from '../core/secrets.js';

export interface MetricsRequest {
  /** The `Authorization` header, if any. */
  authorization: string | undefined;
  /** The socket's peer address. */
  peer: string | undefined;
  /** Whether the request carries `X-Forwarded-For` or `Forwarded` (it came through a proxy). */
  forwarded: boolean;
  /** The `Host` header, if any. */
  host: string | undefined;
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;
/** A `Host` that names this machine: `localhost`, a loopback address, with or without a port. */
const LOOPBACK_HOST = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])(:\d{1,5})?$/i;

/** Which listener a request came to: the service's port, or METRICS_PORT's (no reverse proxy in front). */
export type MetricsListener = 'service' | 'metrics-port';

/**
 * Whether a request may read the metrics: the bearer token when one is set; else, on METRICS_PORT only,
 * loopback without a proxy, by a loopback name.
 */
export function mayReadMetrics(request: MetricsRequest, token: string | undefined, listener: MetricsListener): boolean {
  if (token !== undefined) {
    const m = /^Bearer\s+(\S+)$/i.exec(request.authorization ?? '');
    return m !== null && constantTimeEqual(m[1]!, token);
  }
  return listener === 'metrics-port' && !request.forwarded && request.peer !== undefined && LOOPBACK.test(request.peer) && request.host !== undefined && LOOPBACK_HOST.test(request.host);
}

/** Whether a request is a read of the metrics (any query string is ignored). */
export function isMetricsRequest(req: IncomingMessage): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && (req.url === '/metrics' || req.url?.startsWith('/metrics?') === true);
}

/** What a refused reader is told: how to get in. */
const REFUSALS: Record<'token' | MetricsListener, string> = {
  token: 'Metrics need the bearer token of METRICS_TOKEN.',
  service: 'Metrics are read with the bearer token of METRICS_TOKEN, or without one on METRICS_PORT from this machine.',
  'metrics-port': 'Metrics are read from this machine only, at localhost or a loopback address; set METRICS_TOKEN to read them from elsewhere.',
};

/**
 * Answers a read of the metrics: the text of `read()` (this process's, or the gateway cluster's sum), or 403
 * saying how to get in.
 */
export async function answerMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  access: { token: string | undefined; listener: MetricsListener },
  read: () => Promise<{ text: string; contentType: string }>,
): Promise<void> {
  const request = {
    authorization: req.headers.authorization,
    peer: req.socket.remoteAddress,
    forwarded: req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined,
    host: req.headers.host,
  };
  if (!mayReadMetrics(request, access.token, access.listener)) {
    const refusal = new NdsError('forbidden', { message: REFUSALS[access.token === undefined ? access.listener : 'token'] });
    res.writeHead(403, { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
    res.end(JSON.stringify(refusal.toBody()));
    return;
  }
  const { text, contentType } = await read();
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** This process's metrics, for `answerMetrics`. */
export function metricsOf(metrics: Metrics): () => Promise<{ text: string; contentType: string }> {
  return async () => ({ text: await metrics.text(), contentType: metrics.contentType });
}
