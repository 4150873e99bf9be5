/**
 * The pipe of `nds mcp` (`mcp-command.ts`) for local agents (Claude Desktop and the like), over stdio: every
 * JSON-RPC message the agent writes goes to the server's `POST /mcp` with the CLI's credentials
 * (`NDS_API_URL`, `NDS_API_KEY` or the credentials file of `nds auth login`), and every answer comes back as it
 * is, so the tools, their answers and their visibility are the server's own (decision 0019). Stdout carries only
 * protocol messages; anything for a person goes to stderr.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ApiClient } from './api-client.js';

/** JSON-RPC "internal error": the server could not be reached or refused the request outright. */
const UNREACHABLE = -32603;

function isRequest(m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number; method: string } {
  return 'method' in m && 'id' in m;
}

/** Pipes the agent's stdio to `<api>/mcp` until the agent closes its end; resolves then. */
export async function runMcpProxy(api: Pick<ApiClient, 'baseUrl' | 'apiKey'>, stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout): Promise<void> {
  const local = new StdioServerTransport(stdin as never, stdout as never);
  const remote = new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), api.apiKey ? { requestInit: { headers: { Authorization: `Bearer ${api.apiKey}` } } } : {});
  const closed = new Promise<void>((resolve) => {
    local.onclose = () => {
      void remote.close().finally(resolve);
    };
  });
  local.onmessage = (message) => {
    remote.send(message).catch((err: Error) => {
      process.stderr.write(`nds mcp: ${api.baseUrl}/mcp: ${err.message}\n`);
      if (isRequest(message)) void local.send({ jsonrpc: '2.0', id: message.id, error: { code: UNREACHABLE, message: `nds at ${api.baseUrl} did not answer: ${err.message}` } });
    });
  };
  remote.onmessage = (message) => {
    // Later requests carry the negotiated version (MCP-Protocol-Version), as the SDK's own client sends it.
    const version = 'result' in message ? (message.result as { protocolVersion?: unknown }).protocolVersion : undefined;
    if (typeof version === 'string') remote.setProtocolVersion(version);
    void local.send(message);
  };
  remote.onerror = (err) => process.stderr.write(`nds mcp: ${err.message}\n`);
  await remote.start();
  await local.start();
  return closed;
}
