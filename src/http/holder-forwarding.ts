/**
 * Answers a request about a hosted repository held by another node (decision 0026) by forwarding it there.
 * The caller has been checked here already; the holder checks again. A forwarded request that reaches a node
 * which does not hold the repository either is not sent on (two nodes that take each other for the holder
 * would pass it back and forth): NODE_URL is set differently on them. Only a node can mark a request as
 * forwarded: the marker carries a MAC under OBJECT_SIGNING_SECRET, and one that does not verify (a client
 * wrote it) is ignored, so a client cannot raise that alarm.
 */
import type { Context } from 'hono';
import type { Config } from '../core/config.js';
import { NdsError } from '../core/errors.js';
import { constantTimeEqual } from '../core/secrets.js';
import { FORWARDED_HEADER, forwardToNode } from '../git/forward-to-node.js';
import { objectUrlSigner } from '../objects/signing-secret.js';
import type { AppEnv } from './app-env.js';

export async function forwardToHolder(c: Context<AppEnv>, datasetId: string, holder: string, json?: unknown): Promise<Response> {
  const { config, log } = c.var.deps;
  const from = forwardedBy(c);
  if (from !== undefined) {
    log.error({ dataset: datasetId, holder, node: config.nodeUrl, from }, 'a forwarded request reached a node that does not hold the repository');
    throw new NdsError('repository_unavailable', { message: "The nodes of this service disagree on which one holds the dataset's git repository; an administrator must check NODE_URL." });
  }
  try {
    return await forwardToNode(c.req.raw, holder, { from: forwardingMarker(config, config.nodeUrl, c.req.method, targetOf(c)), json });
  } catch (err) {
    log.warn({ err, dataset: datasetId, holder }, 'the node holding a git repository did not answer');
    throw err;
  }
}

/**
 * The NODE_URL of the node that forwarded this request, read from a marker that verifies; undefined for a
 * client's request, whether it carries no marker or one of its own making.
 */
export function forwardedBy(c: Context<AppEnv>): string | undefined {
  const marker = c.req.header(FORWARDED_HEADER);
  const cut = marker?.lastIndexOf(' ') ?? -1;
  if (marker === undefined || cut <= 0) return undefined;
  const from = marker.slice(0, cut);
  const expected = forwardingMarker(c.var.deps.config, from, c.req.method, targetOf(c));
  return constantTimeEqual(marker, expected) ? from : undefined;
}

/**
 * `<NODE_URL> <MAC>`: the forwarding node, and an HMAC of it with the request's method, path and query, under
 * the key every node of the service shares (OBJECT_SIGNING_SECRET), so a marker fits the one request it came with.
 */
function forwardingMarker(config: Pick<Config, 'dataDir' | 'objectSigningSecret'>, from: string, method: string, target: string): string {
  const mac = objectUrlSigner({ dataDir: config.dataDir, objectSigningSecret: config.objectSigningSecret }).mac(['node-forward', from, method.toUpperCase(), target].join('\n'));
  return `${from} ${mac}`;
}

/** The path and query a request names: what the forwarding node sends on and the holder receives. */
function targetOf(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
}
