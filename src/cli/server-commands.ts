/** Server-side commands: they read the server configuration and talk to the database directly. */
import type { Command } from 'commander';
import { systemClock } from '../core/clock.js';
import { loadConfig } from '../core/config.js';
import { createLogger } from '../core/log.js';

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
    .action(async () => {
      const config = loadConfig();
      const log = createLogger(config.logLevel);
      const { startServer } = await serverModule();
      const { untilSignal } = await lifecycleModule();
      const server = await startServer({ config, log });
      const zstd = await zstdEncoderKind();
      log.info({ url: config.publicUrl, port: server.port, database: server.database.engine, objects: config.objectStoreUrl.split(':')[0], zstd_encoder: zstd, node: process.version }, 'nds is listening');
      process.stderr.write(`nds is listening on ${config.publicUrl} (port ${server.port})\n`);
      await untilSignal();
      log.info('shutting down');
      await server.close();
    });

  program
    .command('worker')
    .description('run the conversion worker alone: take jobs from the database queue')
    .action(async () => {
      const config = loadConfig();
      const log = createLogger(config.logLevel);
      const { startWorkerProcess, untilSignal } = await lifecycleModule();
      const worker = await startWorkerProcess({ config, log });
      log.info({ zstd_encoder: await zstdEncoderKind(), node: process.version }, 'conversion worker started');
      process.stderr.write('nds worker is taking conversion jobs\n');
      await untilSignal();
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
    .description('create or promote an owner account (server-side) and print one API key for it')
    .requiredOption('--username <username>', 'account name')
    .requiredOption('--email <email>', 'account email')
    .action(async (opts: { username: string; email: string }) => {
      const config = loadConfig();
      const { connectDatabase, migrateToLatest } = await databaseModules();
      const { bootstrapOwner } = await import('../accounts/bootstrap-owner.js');
      const database = await connectDatabase(config.databaseUrl);
      try {
        await migrateToLatest(database.db);
        const { apiKey, created } = await bootstrapOwner(database.db, opts, systemClock.now());
        process.stderr.write(`${created ? 'created' : 'promoted'} owner ${opts.username}; the key below is shown once\n`);
        process.stdout.write(`${apiKey}\n`);
      } finally {
        await database.close();
      }
    });
}
