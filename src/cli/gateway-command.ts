/** `nds gateway`: the browser gateway alone (CONTRACT §1), on PORT. */
import type { Command } from 'commander';

export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('run the browser gateway for Zarr data alone (scales out apart from the API)')
    .action(async () => {
      // Loaded here, not at the top: every other command would pay for the gateway's imports at start.
      const { loadConfig } = await import('../config.js');
      const { startGatewayServer } = await import('../gateway/gateway-server.js');
      const { createLogger } = await import('../log.js');
      const config = loadConfig();
      const log = createLogger(config.logLevel);
      const gateway = await startGatewayServer({ config, log });
      log.info({ port: gateway.port, base: config.zarrCacheBaseUrl, sharedCache: Boolean(config.cacheRedisUrl) }, 'nds gateway is listening');
      process.stderr.write(`nds gateway is listening on port ${gateway.port}\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGTERM', () => resolve());
        process.once('SIGINT', () => resolve());
      });
      await gateway.close();
    });
}
