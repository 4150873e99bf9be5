/** Server-side commands: they read the server configuration and talk to the database directly. */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import type { Command } from 'commander';
import { CliError } from './cli-error.js';
import { ndsCommand } from './command-name.js';
import { ERROR_ANSWER_MAX_BYTES, formatBound, JSON_ANSWER_MAX_BYTES } from '../client/bounded-answer.js';
import { DEFAULT_API_URL } from '../client/server-identity.js';
import { systemClock } from '../core/clock.js';
import { loadClientConfig, loadConfig, type Config } from '../core/config.js';
import { createLogger, exitOnUnhandledErrors } from '../core/log.js';

// The server's modules take seconds to import; loaded in the actions, client commands never pay for them.
const serverModule = () => import('../server.js');
const lifecycleModule = () => import('../lifecycle.js');
/** Native zstd-napi, or the WebAssembly fallback where the native module is not built for this Node.js. */
const zstdEncoderKind = async () => (await (await import('../formats/zarr/chunk-codec.js')).zstdEncoder()).kind;
const databaseModules = async () => ({ ...(await import('../db/connect.js')), ...(await import('../db/migrate.js')) });

export function registerServerCommands(program: Command, admin: Command): void {
  program
    .command('serve')
    .description('run the API, browser pages, gateway and conversion worker in one process')
    .option('--demo', 'on an empty service, create a public demo dataset (synthetic EEG and EMG), convert it and print its viewer link')
    .action(async (opts: { demo?: boolean }) => {
      const started = performance.now();
      // In a terminal the log holds warnings only (unless LOG_LEVEL says otherwise): the lines below are for people.
      const config = loadConfig(undefined, { terminal: !!process.stdout.isTTY });
      const log = createLogger(config.logLevel);
      exitOnUnhandledErrors(log);
      const nds = ndsCommand(loadClientConfig().searchPath);
      const { startServer } = await serverModule();
      const { untilSignal } = await lifecycleModule();
      const server = await startServer({ config, log }).catch((err: unknown) => {
        throw portTaken(err, config, nds) ?? err;
      });
      // Listening from here on: a signal that comes while the lines below are printed still shuts down cleanly.
      const signalled = untilSignal();
      const zstd = await zstdEncoderKind();
      log.info({ url: config.publicUrl, port: server.port, database: server.database.engine, objects: config.objectStoreUrl.split(':')[0], zstd_encoder: zstd, node: process.version }, 'nds is listening');
      process.stderr.write(`nds is listening on ${config.publicUrl} (port ${server.port})\n`);
      process.stderr.write(`home page: ${config.publicUrl}/\n`);
      // The nds command talks to http://localhost:8080 unless told otherwise; `auth login` then remembers the URL.
      const commandEnv = config.publicUrl === DEFAULT_API_URL ? '' : `NDS_API_URL=${config.publicUrl} `;
      if (commandEnv) process.stderr.write(`the nds command: ${commandEnv}${nds} auth login (once; it remembers this server)\n`);
      const link = await server.deps.ownerSetup.open(server.deps.db);
      if (link) {
        process.stderr.write(
          `\nThis service has no owner yet. Open this one-time link (valid for an hour) to create the owner account:\n  ${config.publicUrl}/setup?token=${link.token}\n` +
            `or, in another terminal: ${commandEnv}${nds} admin bootstrap --username <name> --email <address>\n\n`,
        );
      }
      if (opts.demo) {
        const { createDemoDataset } = await import('../demo/demo-dataset.js');
        const demo = await createDemoDataset(server.deps, { log });
        if (demo.created) {
          process.stderr.write(`demo dataset ${demo.id} converted in ${((performance.now() - started) / 1000).toFixed(1)} s; its viewer:\n  ${demo.viewerUrl}\n`);
        } else process.stderr.write(`--demo: ${demo.reason}\n`);
      }
      await signalled;
      log.info('shutting down');
      await server.close();
    });

  program
    .command('worker')
    .description('run the conversion worker alone: take jobs from the database queue')
    .action(async () => {
      const config = loadConfig();
      const log = createLogger(config.logLevel, undefined, 'worker');
      exitOnUnhandledErrors(log);
      const { startWorkerProcess, untilSignal } = await lifecycleModule();
      const worker = await startWorkerProcess({ config, log });
      const signalled = untilSignal();
      log.info({ zstd_encoder: await zstdEncoderKind(), node: process.version, metrics: worker.metricsUrl }, 'conversion worker started');
      process.stderr.write(`nds worker is taking conversion jobs${worker.metricsUrl ? `; /metrics, /healthz and /readyz on ${worker.metricsUrl}` : ''}\n`);
      await signalled;
      log.info('worker stopping after the job in hand');
      await worker.close();
    });

  program
    .command('migrate')
    .description('apply database migrations')
    .action(async () => {
      const config = loadConfig();
      const { connectDatabase, migrateToLatest } = await databaseModules();
      const database = await connectDatabase(config.databaseUrl);
      try {
        const applied = await migrateToLatest(database.db);
        process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'database is up to date\n');
      } finally {
        await database.close();
      }
    });

  admin
    .command('bootstrap')
    .description('create or promote an owner account (server-side) and print one API key for it; works beside a running nds serve on the embedded database')
    .requiredOption('--username <username>', 'account name')
    .requiredOption('--email <email>', 'account email')
    .action(async (opts: { username: string; email: string }) => {
      const config = loadConfig();
      const { connectDatabase, migrateToLatest } = await databaseModules();
      const { bootstrapOwner } = await import('../accounts/bootstrap-owner.js');
      let result: { apiKey: string; created: boolean; apiUrl?: string };
      let database: Awaited<ReturnType<typeof connectDatabase>> | undefined;
      try {
        database = await connectDatabase(config.databaseUrl);
      } catch (err) {
        // The embedded database belongs to a running nds serve: ask it, over its local socket.
        const { adminSocketPath } = await lifecycleModule();
        const socket = adminSocketPath(config.dataDir);
        if (!/is in use by process/.test((err as Error).message) || !existsSync(socket)) throw err;
        result = await bootstrapThroughSocket(socket, opts);
      }
      if (database) {
        try {
          await migrateToLatest(database.db);
          result = await bootstrapOwner(database.db, opts, systemClock.now());
        } finally {
          await database.close();
        }
      }
      const { apiKey, created } = result!;
      // The running server knows its own address; without one, this terminal's settings are the best guess.
      const url = result!.apiUrl ?? config.publicUrl;
      const nds = ndsCommand(loadClientConfig().searchPath);
      process.stderr.write(
        `${created ? 'created' : 'promoted'} owner ${opts.username}; the key below is shown once. Use it with the nds command:\n  export NDS_API_URL=${url} NDS_API_KEY=<the key>\n` +
          `or sign in through the browser instead with \`${url === DEFAULT_API_URL ? '' : `NDS_API_URL=${url} `}${nds} auth login\` (the key is then not needed).\n`,
      );
      process.stdout.write(`${apiKey}\n`);
    });
}

/** The port of `nds serve` is taken: which one, and how to choose another. */
function portTaken(err: unknown, config: Config, nds: string): CliError | undefined {
  if ((err as { code?: string })?.code !== 'EADDRINUSE') return undefined;
  const other = config.port === 8080 ? 8081 : config.port + 1;
  return new CliError(
    `port ${config.port} is in use by another program (another nds serve?). Choose another port with PORT, for example:\n` +
      `  PORT=${other} npm start        (or: PORT=${other} ${nds} serve)\n` +
      `and point the nds command at it: NDS_API_URL=http://localhost:${other} ${nds} auth login`,
  );
}

function bootstrapThroughSocket(socketPath: string, input: { username: string; email: string }): Promise<{ apiKey: string; created: boolean; apiUrl?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: '/bootstrap', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      let bytes = 0;
      const most = res.statusCode === 200 ? JSON_ANSWER_MAX_BYTES : ERROR_ANSWER_MAX_BYTES;
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        bytes += Buffer.byteLength(d);
        if (bytes > most) {
          res.destroy();
          reject(new CliError(`the answer of the running server through ${socketPath} (HTTP ${res.statusCode}) is larger than ${formatBound(most)}, which no real answer reaches: reading stopped there`));
        } else text += d;
      });
      res.on('end', () => {
        try {
          const body = JSON.parse(text) as { api_key?: string; created?: boolean; api_url?: string; message?: string; details?: string[] };
          if (res.statusCode === 200 && body.api_key) resolve({ apiKey: body.api_key, created: !!body.created, ...(typeof body.api_url === 'string' ? { apiUrl: body.api_url } : {}) });
          else reject(new CliError(`the running server refused: ${body.message ?? text}${body.details?.length ? ` (${body.details.join('; ')})` : ''}`));
        } catch {
          reject(new CliError(`the running server answered ${res.statusCode}: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on('error', (err) => reject(new CliError(`cannot reach the running nds serve through ${socketPath}: ${err.message}`)));
    req.end(JSON.stringify(input));
  });
}
