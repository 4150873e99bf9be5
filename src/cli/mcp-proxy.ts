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
import { ERROR_ANSWER_MAX_BYTES, JSON_ANSWER_MAX_BYTES, readBoundedAnswer } from '../client/bounded-answer.js';
import type { ApiClient } from './api-client.js';

/** JSON-RPC "internal error": the server could not be reached or refused the request outright. */
const UNREACHABLE = -32603;

function isRequest(m: JSONRPCMessage): m is JSONRPCMessage & { id: string | number; method: string } {
  return 'method' in m && 'id' in m;
}

/**
 * `fetch` for the SDK's transport, which reads a JSON answer or a refusal whole: those are read here first, up
 * to their bound, and a longer one fails the request (`AnswerTooLargeError`). Event streams pass as they are
 * (a session's stream lasts), and so do redirects, which the SDK judges by their headers.
 */
function boundedFetch(base: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const res = await base(input, init);
    const eventStream = (res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    if (!res.body || eventStream || (res.status >= 300 && res.status < 400) || res.status === 204 || res.status === 205) return res;
    const body = await readBoundedAnswer(res, res.ok ? JSON_ANSWER_MAX_BYTES : ERROR_ANSWER_MAX_BYTES, '/mcp');
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

/** Pipes the agent's stdio to `<api>/mcp` until the agent closes its end; resolves then. */
export async function runMcpProxy(api: Pick<ApiClient, 'baseUrl' | 'apiKey'>, stdin: NodeJS.ReadableStream = process.stdin, stdout: NodeJS.WritableStream = process.stdout): Promise<void> {
  const local = new StdioServerTransport(stdin as never, stdout as never);
  const remote = new StreamableHTTPClientTransport(new URL(`${api.baseUrl}/mcp`), { fetch: boundedFetch(), ...(api.apiKey ? { requestInit: { headers: { Authorization: `Bearer ${api.apiKey}` } } } : {}) });
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
