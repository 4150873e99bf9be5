/**
 * `nds mcp`: the nds MCP server for local agents over stdio, a pipe to the server's `POST /mcp`
 * (`mcp-proxy.ts`, decision 0019). The MCP SDK loads only when this command runs, not for every command.
 */
import type { Command } from 'commander';
import { ApiClient } from './api-client.js';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description('the MCP server for AI agents over stdio, reading the nds server as you (NDS_API_URL, your key); see docs/agents.md')
    .action(async () => {
      const api = await ApiClient.fromEnvironment();
      process.stderr.write(`nds mcp: serving ${api.baseUrl}/mcp over stdio${api.apiKey ? '' : ' anonymously (public data only)'}\n`);
      const { runMcpProxy } = await import('./mcp-proxy.js');
      await runMcpProxy(api);
    });
}
