/**
 * Answers a request about a hosted repository held by another node (decision 0026) by forwarding it there.
 * The caller has been checked here already; the holder checks again. A forwarded request that reaches a node
 * which does not hold the repository either is not sent on (two nodes that take each other for the holder
 * would pass it back and forth): NODE_URL is set differently on them.
 */
import type { Context } from 'hono';
import { NdsError } from '../core/errors.js';
import { FORWARDED_HEADER, forwardToNode } from '../git/forward-to-node.js';
import type { AppEnv } from './app-env.js';

export async function forwardToHolder(c: Context<AppEnv>, datasetId: string, holder: string, json?: unknown): Promise<Response> {
  const { config, log } = c.var.deps;
  const from = c.req.header(FORWARDED_HEADER);
  if (from !== undefined) {
    log.error({ dataset: datasetId, holder, node: config.nodeUrl, from }, 'a forwarded request reached a node that does not hold the repository');
    throw new NdsError('repository_unavailable', { message: "The nodes of this service disagree on which one holds the dataset's git repository; an administrator must check NODE_URL." });
  }
  try {
    return await forwardToNode(c.req.raw, holder, { from: config.nodeUrl, json });
  } catch (err) {
    log.warn({ err, dataset: datasetId, holder }, 'the node holding a git repository did not answer');
    throw err;
  }
}
