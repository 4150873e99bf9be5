/**
 * `nds serve`: the API, the pages, the gateway and (by default) the conversion worker in one process, on
 * the lifecycle of `lifecycle.ts`. Used by `nds serve`, the benchmarks and end-to-end tests (on port 0, a
 * free port).
 */
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import type { DatabaseHandle } from './db/connect.js';
import type { RunningWorker } from './conversion/worker.js';
import type { ServerDeps } from './http/app-env.js';
import { observeRequests } from './http/request-observer.js';
import { countExternalMemoryInHeapLimit } from './core/v8-heap.js';
import { closeDeps, closeHttpServer, keepConnectionsAlive, openAdminSocket, openMetricsPort, openServerDeps, openWorker, type OpenOptions } from './lifecycle.js';

export interface StartOptions extends OpenOptions {
  /** Listen address; defaults to all interfaces. */
  hostname?: string;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Where METRICS_PORT answers `/metrics`, `/healthz` and `/readyz`; undefined without METRICS_PORT. */
  metricsUrl: string | undefined;
  deps: ServerDeps;
  database: DatabaseHandle;
  /** The in-process conversion worker, when this process runs one. */
  worker: RunningWorker | undefined;
  /** Stops accepting connections, lets in-flight requests finish, then closes what the process opened. */
  close(): Promise<void>;
}

export async function startServer(options: StartOptions): Promise<RunningServer> {
  // Before the first upload: its body buffers would otherwise bring a full collection every few dozen megabytes.
  countExternalMemoryInHeapLimit();
  const { opened, deps } = await openServerDeps(options);
  try {
    const { config } = deps;
    const worker = config.conversionDispatch === 'local' && config.inProcessWorker ? openWorker(opened) : undefined;
    // The embedded database on disk is this process's alone: `nds admin bootstrap` asks through a local socket.
    if (config.databaseUrl.startsWith('pglite:') && config.databaseUrl !== 'pglite:memory') {
      // Without it (a data folder path too long for a socket, a file system without sockets) only
      // `nds admin bootstrap` beside the running server is lost: the server starts anyway.
      const closeSocket = await openAdminSocket(deps, config.dataDir, deps.log).catch((err: unknown) => {
        deps.log.warn({ err }, 'the admin socket could not be opened; nds admin bootstrap needs the server stopped');
        return undefined;
      });
      if (closeSocket) opened.closers.push(closeSocket);
    }
    const app = createApp(deps);
    const observed = { log: deps.log, metrics: deps.metrics, metricsToken: config.metricsToken };
    const server = await new Promise<Server>((resolve, reject) => {
      const s = serve(
        {
          fetch: app.fetch,
          port: config.port,
          hostname: options.hostname,
          createServer: ((serverOptions: ServerOptions, listener: RequestListener) => createServer(serverOptions, observeRequests(listener, observed))) as typeof createServer,
        },
        () => resolve(s as Server),
      ) as Server;
      keepConnectionsAlive(s, config);
      s.once('error', reject);
    });
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    let closing: Promise<void> | undefined;
    const close = () => (closing ??= closeHttpServer(server).then(() => closeDeps(opened)));
    const metricsUrl = config.metricsPort === undefined ? undefined : await openMetricsPort(opened, config.metricsPort).catch(async (err: unknown) => {
      await close();
      throw err;
    });
    return {
      url: `http://localhost:${port}`,
      port,
      metricsUrl,
      deps,
      database: opened.database,
      worker,
      close,
    };
  } catch (err) {
    await closeDeps(opened);
    throw err;
  }
}
