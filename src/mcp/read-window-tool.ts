/**
 * `read_window`: an exact window of a recording, the samples `GET /datasets/:id/signal` answers, bit for bit.
 * As JSON numbers (float32 values, printed exactly) up to `MAX_JSON_VALUES`; as a `.npy` embedded resource up
 * to `MAX_NPY_VALUES`, with a `resource_link` to the same window at the signal route (carrying a short read
 * grant when the dataset is private, so the link works without the caller's key).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { NdsError } from '../core/errors.js';
import { datasetVisibility } from '../datasets/dataset-queries.js';
import { READ_GRANT_SECONDS, signReadGrant } from '../datasets/read-grant.js';
import type { WindowRequest } from '../client/index.js';
import { planWindow, windowJson, windowNpy, windowNpyPieces, type WindowPlan } from '../recordings/signal-window.js';
import type { ToolContext } from './catalogue-tools.js';
import type { ReadWindowArgs, SummarizeArgs } from './tool-schemas.js';
import { answer } from './tool-answer.js';

/** Most values (channels × samples) of one `npy` answer: 16 MiB of float32, about 22 MB of base64. */
export const MAX_NPY_VALUES = 4 * 1024 * 1024;

/** The signal route's request for a tool's window selection. */
export function windowRequest(args: SummarizeArgs & { rate?: number | undefined }): WindowRequest {
  const req: WindowRequest = { dataset_id: args.dataset_id, path: args.path };
  if (args.start_s !== undefined) req.start = args.start_s;
  if (args.duration_s !== undefined) req.duration = args.duration_s;
  if (args.start_sample !== undefined) req.start_sample = args.start_sample;
  if (args.n_samples !== undefined) req.n_samples = args.n_samples;
  if (args.channels !== undefined) req.channels = args.channels;
  if (args.channel_type !== undefined) req.channel_type = args.channel_type;
  if (args.group !== undefined) req.group = args.group;
  if (args.rate !== undefined) req.rate = args.rate;
  return req;
}

/** The window at `GET /datasets/:id/signal` as `.npy`, the selection as asked; with a read grant when `grant`. */
function signalUrl(publicUrl: string, args: ReadWindowArgs, plan: WindowPlan, grant?: string): string {
  const query = new URLSearchParams({ path: args.path, start_sample: String(plan.start), n_samples: String(plan.count), group: plan.group.name });
  if (args.channels) query.set('channels', args.channels.join(','));
  else if (args.channel_type) query.set('channel_type', args.channel_type);
  if (plan.ratio) query.set('rate', String(plan.rate));
  query.set('format', 'npy');
  if (grant) query.set('grant', grant);
  return `${publicUrl}/datasets/${plan.datasetId}/signal?${query}`;
}

/** What every window answer says about its samples. */
export function windowFacts(args: { dataset_id: string; path: string }, plan: WindowPlan) {
  const channels = plan.rows.map((r) => plan.group.channels[r]!);
  return {
    dataset_id: args.dataset_id,
    path: args.path,
    group: plan.group.name,
    channels: channels.map((c) => c.label),
    types: channels.map((c) => c.type),
    units: channels.map((c) => c.unit),
    rate: plan.rate,
    start_sample: plan.outStart,
    start_s: plan.outStart / plan.rate,
    shape: [plan.rows.length, plan.outCount] as [number, number],
  };
}

export async function readWindowTool({ deps, user, signIn, attachments }: ToolContext, args: ReadWindowArgs): Promise<CallToolResult> {
  const plan = await planWindow(deps, user, windowRequest(args), { format: args.format, dtype: 'float32' });
  const values = plan.rows.length * plan.outCount;
  if (args.format === 'npy' && values > MAX_NPY_VALUES) {
    throw new NdsError('validation_failed', { message: `read_window answers at most ${MAX_NPY_VALUES} values as npy; this window holds ${values}.`, details: ['split the window in time or ask for fewer channels'] });
  }
  // The link must read without the caller's key: a private dataset's carries a read grant of the caller's, which
  // reads only while the caller may, and their key lives (`mayStillRead`).
  const grant = user && (await datasetVisibility(deps.db, plan.datasetId)) !== 'public' ? signReadGrant(deps.config, plan.datasetId, user.id, deps.clock.now(), signIn).grant : undefined;
  const facts = { ...windowFacts(args, plan), format: args.format, signal_url: signalUrl(deps.config.publicUrl, args, plan, grant) };
  if (args.format === 'json') return answer({ ...facts, data: await windowJson(deps, plan, 'float32') });
  // Over HTTP the base64 is written into the answer as it is sent, after the SDK has checked and serialised it,
  // from pieces converted as the socket takes them (`blob-attachments.ts`, `windowNpyPieces`).
  const pieces = attachments && (await windowNpyPieces(deps, plan));
  const npy = pieces ? undefined : await windowNpy(deps, plan, 'float32');
  const blob = attachments ? attachments.attach(pieces ?? npy!) : Buffer.from(npy!.buffer, npy!.byteOffset, npy!.byteLength).toString('base64');
  return answer(facts, [
    { type: 'resource', resource: { uri: signalUrl(deps.config.publicUrl, args, plan), mimeType: 'application/x-npy', blob } },
    {
      type: 'resource_link',
      uri: facts.signal_url,
      name: `${plan.datasetId} ${args.path} [${plan.rows.length} × ${plan.outCount}]`,
      mimeType: 'application/x-npy',
      description: `The same window from GET /datasets/${plan.datasetId}/signal${grant ? ` (a read grant valid for ${READ_GRANT_SECONDS / 60} minutes)` : ''}`,
    },
  ]);
}

