/**
 * `nds gateway` on GATEWAY_WORKERS processes: node:cluster forks workers that share one listening port
 * (the primary hands each new connection to the next worker), each with its own memory cache. Drops reach
 * every worker: through Redis with CACHE_REDIS_URL, else relayed by the primary over the IPC channel. With
 * one worker there is no primary: the process serves alone.
 */
import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from './core/config.js';
import type { Logger } from './core/log.js';
import type { CacheDrop } from './gateway/gateway-cache.js';
import { startGatewayServer } from './gateway-server.js';
import { untilSignal } from './lifecycle.js';
import type { DropChannel } from './gateway/relayed-cache.js';

/** The envelope of a drop on the IPC channel (other messages, e.g. cluster's own, are left alone). */
const DROP = 'ndsGatewayDrop';
/** A worker asks the primary for every worker's metrics, summed; the answer comes back under METRICS_REPLY. */
const METRICS_ASK = 'ndsGatewayMetricsAsk';
const METRICS_REPLY = 'ndsGatewayMetricsReply';
/** A worker that dies younger than this is not replaced: it would only die again (a bad setting, a port taken). */
const MIN_LIFE_MS = 10_000;

export interface GatewayProcessOptions {
  config: Config;
  log: Logger;
  /** Listen address; defaults to all interfaces. */
  hostname?: string;
}

/** Runs `nds gateway` until SIGTERM or SIGINT and then stops it; throws when every worker died young. */
export async function runGateway(options: GatewayProcessOptions): Promise<void> {
  if (options.config.gatewayWorkers > 1 && cluster.isPrimary) return runPrimary(options);
  const { config, log } = options;
  const inCluster = cluster.isWorker;
  const gateway = await startGatewayServer({
    config,
    log,
    hostname: options.hostname,
    peers: inCluster ? ipcDropChannel() : undefined,
    readMetrics: inCluster ? clusterMetricsThroughPrimary() : undefined,
  });
  // The primary sums every worker's registry (prom-client's AggregatorRegistry asks each over IPC).
  // Making one registers the worker's answer to the primary's requests.
  if (inCluster) {
    AggregatorRegistry.setRegistries([gateway.deps.metrics.registry]);
    new AggregatorRegistry();
  }
  log.info({ port: gateway.port, metrics: gateway.metricsUrl, base: config.zarrCacheBaseUrl, sharedCache: Boolean(config.cacheRedisUrl) }, 'nds gateway is listening');
  if (cluster.isPrimary) process.stderr.write(`nds gateway is listening on port ${gateway.port}\n`);
  await untilSignal();
  await gateway.close();
  // A worker's IPC channel to the primary would keep it running.
  if (cluster.isWorker) process.disconnect();
}

async function runPrimary({ config, log }: GatewayProcessOptions): Promise<void> {
  const bornAt = new Map<number, number>();
  let stopping = false;
  const listening = new Set<number>();
  const fork = () => bornAt.set(cluster.fork().id, Date.now());
  const alive = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (from, message) => {
    if (message === null || typeof message !== 'object') return;
    if (METRICS_ASK in message) {
      const ask = (message as Record<string, unknown>)[METRICS_ASK];
      aggregator
        .clusterMetrics()
        .then((text) => ({ text, contentType: aggregator.contentType }))
        .catch((err: Error) => ({ error: err.message }))
        .then((reply) => from.isDead() || from.send({ [METRICS_REPLY]: { ask, ...reply } }));
      return;
    }
    if (!(DROP in message)) return;
    for (const worker of alive()) if (worker.id !== from.id) worker.send(message);
  });
  cluster.on('listening', (worker, address) => {
    // A worker listens on PORT first, then on METRICS_PORT if set: only its first port is counted.
    if (listening.has(worker.id)) return;
    listening.add(worker.id);
    if (listening.size !== config.gatewayWorkers) return;
    log.info({ port: address.port, workers: config.gatewayWorkers, sharedCache: Boolean(config.cacheRedisUrl) }, 'nds gateway is listening');
    process.stderr.write(`nds gateway is listening on port ${address.port} (${config.gatewayWorkers} workers)\n`);
  });
  const allDied = new Promise<'died'>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return;
      const young = Date.now() - (bornAt.get(worker.id) ?? 0) < MIN_LIFE_MS;
      log.error({ pid: worker.process.pid, code, signal, replaced: !young }, 'gateway worker exited');
      if (!young) fork();
      else if (alive().length === 0) resolve('died');
    });
  });
  for (let i = 0; i < config.gatewayWorkers; i++) fork();
  const outcome = await Promise.race([untilSignal(), allDied]);
  stopping = true;
  await Promise.all(alive().map((w) => new Promise<void>((resolve) => {
    w.once('exit', () => resolve());
    w.process.kill('SIGTERM');
  })));
  if (outcome === 'died') throw new Error('every gateway worker exited right after it started; see the log above');
}

/**
 * A worker's `/metrics`: the sum over every worker, which only the primary can make (it asks each over IPC):
 * requests and cache answers summed, gauges summed or, for states (circuits, the queue), their maximum.
 */
function clusterMetricsThroughPrimary(): () => Promise<{ text: string; contentType: string }> {
  let asked = 0;
  const waiting = new Map<number, { resolve: (v: { text: string; contentType: string }) => void; reject: (e: Error) => void }>();
  process.on('message', (message: unknown) => {
    if (message === null || typeof message !== 'object' || !(METRICS_REPLY in message)) return;
    const reply = (message as Record<string, { ask: number; text?: string; contentType?: string; error?: string }>)[METRICS_REPLY]!;
    const waiter = waiting.get(reply.ask);
    waiting.delete(reply.ask);
    if (reply.error !== undefined || reply.text === undefined) waiter?.reject(new Error(reply.error ?? 'no metrics'));
    else waiter?.resolve({ text: reply.text, contentType: reply.contentType ?? 'text/plain' });
  });
  return () =>
    new Promise((resolve, reject) => {
      const ask = ++asked;
      waiting.set(ask, { resolve, reject });
      process.send?.({ [METRICS_ASK]: ask });
      // prom-client gives up on a silent worker after 5 s; this waits a little longer than that.
      setTimeout(() => {
        if (waiting.delete(ask)) reject(new Error('the gateway primary did not send the metrics in time'));
      }, 6000).unref();
    });
}

/** A worker's side of the relay: drops go to the primary, which sends them to the other workers. */
function ipcDropChannel(): DropChannel {
  return {
    send: (message: CacheDrop) => void process.send?.({ [DROP]: message }),
    onMessage: (listener) =>
      process.on('message', (message: unknown) => {
        if (message !== null && typeof message === 'object' && DROP in message) listener((message as Record<string, unknown>)[DROP]);
      }),
  };
}
