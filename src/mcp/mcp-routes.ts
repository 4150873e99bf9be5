/**
 * `POST /mcp`: the Model Context Protocol server for AI agents over streamable HTTP (docs/agents.md),
 * stateless: every request is answered by a server made for it and its caller (decision 0019), in JSON. The
 * caller is whoever the request's credentials say, as for every API route: anonymous callers see public data,
 * a bearer key what its account may read. `GET /mcp` answers 405: this server opens no stream of its own.
 */
import { signInOf } from '../accounts/sign-in-of-credential.js';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { clientLimitKey } from '../http/client-ip.js';
import { jsonProblems, readBodyBytes } from '../http/request-input.js';
import { route, type Route } from '../http/route.js';
import { BlobAttachments } from './blob-attachments.js';
import { spendCatalogueCall } from './catalogue-budget.js';
import { spendMcpRequests } from './mcp-limits.js';

/** Largest request body: tool arguments are small; a megabyte leaves room for long channel lists. */
export const MCP_BODY_BYTES = 1024 * 1024;
const MCP_BODY_KEYS = 20_000;

/** A JSON-RPC error answered before any message is handled, in the shape the SDK answers its own. */
function rpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });
}

type Messages = { ok: true; body: unknown } | { ok: false; answer: Response };

/** The request's JSON-RPC messages, parsed and checked as every route's input is (`request-input.ts`). */
async function readMessages(c: Context<AppEnv>): Promise<Messages> {
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return { ok: false, answer: rpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json') };
  const bytes = await readBodyBytes(c, MCP_BODY_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return { ok: false, answer: rpcError(400, -32700, 'Parse error: Invalid JSON') };
  }
  const problems = jsonProblems(body, MCP_BODY_KEYS);
  if (problems.length > 0) return { ok: false, answer: rpcError(400, -32600, `Invalid Request: ${problems.join('; ')}`) };
  return { ok: true, body };
}

/** JSON-RPC requests in a body (a message or a batch): notifications and responses cost nothing. */
function requestCount(body: unknown): number {
  const isRequest = (m: unknown) => typeof m === 'object' && m !== null && 'method' in m && 'id' in m;
  return Array.isArray(body) ? body.filter(isRequest).length : isRequest(body) ? 1 : 0;
}

async function answerMcp(c: Context<AppEnv>): Promise<Response> {
  const { deps } = c.var;
  const messages = await readMessages(c);
  if (!messages.ok) return messages.answer;
  const caller = c.var.caller;
  await spendMcpRequests(deps.mcpLimits, caller ? `user:${caller.user.id}` : `ip:${clientLimitKey(c)}`, requestCount(messages.body));
  // The SDK loads on the first MCP request, not when the server starts (about a second on a busy machine).
  const [{ WebStandardStreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('./mcp-server.js'),
  ]);
  const attachments = new BlobAttachments();
  const server = createMcpServer({ deps, user: caller?.user, signIn: signInOf(caller), attachments, spendCatalogueCall: () => spendCatalogueCall(c) });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await attachments.splice(await transport.handleRequest(c.req.raw, { parsedBody: messages.body }));
  } finally {
    await server.close();
  }
}

export const mcpRoutes: Route[] = [
  route({
    method: 'post',
    path: '/mcp',
    summary: 'The MCP server for AI agents: streamable HTTP, stateless, JSON answers (docs/agents.md)',
    access: 'optional',
    undocumented: true,
    rawBody: `JSON-RPC messages, at most ${MCP_BODY_BYTES} bytes`,
    handler: (c) => answerMcp(c),
  }),
  route({
    method: 'get',
    path: '/mcp',
    summary: 'The MCP server opens no stream of its own: 405, as the protocol allows',
    access: 'none',
    undocumented: true,
    handler: () => rpcError(405, -32000, 'Method not allowed: this MCP server is stateless and sends nothing unasked; POST requests to /mcp.', { Allow: 'POST' }),
  }),
];
