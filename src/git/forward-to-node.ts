/**
 * Forwards one HTTP request to another node of the service (decision 0026): a hosted repository's git
 * requests go to the node whose disk holds it. The body streams both ways; the caller's credentials go along
 * unchanged, and the holder checks them again, so forwarding grants nothing the caller could not do there.
 * A holder that cannot be reached is the caller's 503 with the reason, never a 500.
 */
import { NdsError } from '../core/errors.js';
import { currentRequest } from '../core/request-context.js';

/** Marks a forwarded request: the holder serves it from its own disk and never forwards it again. */
export const FORWARDED_HEADER = 'x-nds-forwarded-by';

/** Request headers a forwarded git request keeps (git's, the credentials, the request id). */
const KEPT_REQUEST_HEADERS = ['authorization', 'cookie', 'origin', 'content-type', 'content-encoding', 'accept', 'git-protocol', 'user-agent', 'x-request-id'];
/** Answer headers that belong to one connection, or that the fetch below has already acted on (it decodes bodies). */
const DROPPED_ANSWER_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

export interface ForwardOptions {
  /** The marker sent in `FORWARDED_HEADER` (`http/holder-forwarding.ts`: this node's NODE_URL and a MAC); the holder logs its NODE_URL. */
  from: string;
  /** How long to wait for the holder's answer to a GET, in ms (a host that vanished never refuses). */
  headersTimeoutMs?: number;
  /** The body to send instead of the request's own (one already read, as JSON). */
  json?: unknown;
}

/** Sends `request` (its path and query) to the node at `nodeUrl` and returns the node's answer as it streams. */
export async function forwardToNode(request: Request, nodeUrl: string, options: ForwardOptions): Promise<Response> {
  const incoming = new URL(request.url);
  const target = new URL(`${new URL(nodeUrl).pathname.replace(/\/+$/, '')}${incoming.pathname}${incoming.search}`, nodeUrl);
  const headers = new Headers();
  for (const name of KEPT_REQUEST_HEADERS) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  // The id this node serves the request under (adopted or its own) goes along, so both nodes log one id.
  const requestId = currentRequest()?.requestId;
  if (requestId !== undefined) headers.set('x-request-id', requestId);
  headers.set(FORWARDED_HEADER, options.from);
  const body = options.json !== undefined ? JSON.stringify(options.json) : request.body;
  if (options.json !== undefined) {
    headers.set('content-type', 'application/json');
    headers.delete('content-encoding');
  }
  const abort = new AbortController();
  // A push's pack may take longer to send, and a version longer to make, than any wait for the answer: only
  // reads without a body (git's first request, info/refs) are given up on early; a host that went away fails
  // the others at the system's connect timeout.
  const streamed = body instanceof ReadableStream;
  const bounded = request.method === 'GET' || request.method === 'HEAD';
  const timer = !bounded ? undefined : setTimeout(() => abort.abort(new Error('no answer in time')), options.headersTimeoutMs ?? 15_000);
  let answer: Response;
  try {
    answer = await fetch(target, {
      method: request.method,
      headers,
      body,
      redirect: 'manual',
      signal: abort.signal,
      ...(streamed ? { duplex: 'half' } : {}),
    } as RequestInit);
  } catch (err) {
    throw new NdsError('repository_unavailable', { cause: err, headers: { 'Retry-After': '30' } });
  } finally {
    clearTimeout(timer);
  }
  const kept = new Headers();
  answer.headers.forEach((value, name) => {
    if (!DROPPED_ANSWER_HEADERS.has(name)) kept.append(name, value);
  });
  return new Response(answer.body, { status: answer.status, headers: kept });
}
