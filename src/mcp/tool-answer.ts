/**
 * How every nds tool answers: its result as `structuredContent` and the same JSON as text (for clients that
 * read only text), and a refusal as a tool error whose text is the HTTP API's error body (JSON), so an agent
 * reads one vocabulary (`core/errors.ts`) whichever way it asked.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { NdsError } from '../core/errors.js';
import type { Logger } from '../core/log.js';

type Content = CallToolResult['content'];

/** A result: `structured` as `structuredContent` and as text, then any `more` content (images, resources). */
export function answer(structured: Record<string, unknown>, more: Content = []): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }, ...more] };
}

/**
 * A refusal as a tool error: an `NdsError` keeps its code, message and details (a private dataset of someone
 * else reads exactly as an unknown id); anything else is logged and answered without internals.
 */
export function refusal(err: unknown, log: Logger, tool: string): CallToolResult {
  const known = err instanceof NdsError ? err : undefined;
  if (!known) log.error({ err, tool }, 'an MCP tool failed');
  const body = (known ?? new NdsError('internal_error')).toBody();
  // No `structuredContent`: clients check it against the tool's output schema, errors included.
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}
