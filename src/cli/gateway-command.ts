/** `nds gateway`: the browser gateway alone (docs/architecture.md), on PORT, with GATEWAY_WORKERS processes. */
import type { Command } from 'commander';

export function registerGatewayCommand(program: Command): void {
  program
    .command('gateway')
    .description('run the browser gateway for Zarr data alone (scales out apart from the API)')
    .action(async () => {
      // Loaded here, not at the top: every other command would pay for the gateway's imports at start.
      const { loadConfig } = await import('../core/config.js');
      const { runGateway } = await import('../gateway-cluster.js');
      const { createLogger, exitOnUnhandledErrors } = await import('../core/log.js');
      const config = loadConfig();
      const log = createLogger(config.logLevel, undefined, 'gateway');
      exitOnUnhandledErrors(log);
      await runGateway({ config, log });
    });
}
