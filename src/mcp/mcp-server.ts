/**
 * The nds MCP server for one request and one caller: its seven tools and two resource templates, each a thin
 * call of the service the HTTP API calls, with the caller's own visibility. Made per request (the HTTP
 * transport is stateless, decision 0019), so nothing of one caller is ever reachable from another's.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type CallToolResult, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { NdsError } from '../core/errors.js';
import { listDatasets } from '../datasets/list-datasets.js';
import { listRecordings, recordingAt } from '../recordings/catalogue.js';
import { DATASET_LISTED, getDatasetTool, getEventsTool, listRecordingsTool, searchDatasetsTool, type ToolContext } from './catalogue-tools.js';
import { readWindowTool } from './read-window-tool.js';
import { answer, refusal } from './tool-answer.js';
import { EventsInput, GetDatasetInput, ListRecordingsInput, PlotInput, ReadWindowInput, SearchInput, SummarizeInput } from './tool-schemas.js';
import { summarizeWindowTool } from './summarize-window-tool.js';
import { plotWindowTool } from './plot-window-tool.js';

export const MCP_SERVER_NAME = 'nds';
export const MCP_SERVER_VERSION = '0.1.0';

/** How many items `resources/list` names per template: the first page; the tools page through the rest. */
export const LISTED_RESOURCES = 100;

const instructions = `nds hosts EEG, EMG and iEEG datasets (BIDS) and serves every recording as exact samples.
Find data with search_datasets and list_recordings, look at one with get_dataset and get_events, then read a
window with read_window (exact float32 values), summarize_window (statistics and band powers) or plot_window
(a picture as the nds viewer draws it, with the viewer's link). Times are seconds from a recording's first sample.`;

const loose = (shape: z.ZodRawShape) => z.looseObject(shape);

/**
 * One read-only tool: what `tools/list` shows of it (title, description, the schemas of its arguments and of
 * its answer) and the service call it runs. `run` is a method so that a table can hold tools of different
 * arguments; `tool()` is what ties each one's arguments to its input schema.
 */
interface ToolDeclaration<Input extends z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  input: Input;
  output: z.ZodType;
  run(ctx: ToolContext, args: z.output<z.ZodObject<Input>>): Promise<CallToolResult | Record<string, unknown>>;
}

const tool = <Input extends z.ZodRawShape>(declaration: ToolDeclaration<Input>): ToolDeclaration<z.ZodRawShape> => declaration;

/** The seven tools, in the order `tools/list` gives them. */
const TOOLS: readonly ToolDeclaration<z.ZodRawShape>[] = [
  tool({
    name: 'search_datasets',
    title: 'Search datasets',
    description: 'Search the datasets you may read (public ones, and your own with a key) by words, modality and task. Each has its id, name, modalities, subjects, recordings, hours and DOI.',
    input: SearchInput,
    output: loose({ total: z.number(), datasets: z.array(loose({ id: z.string(), name: z.string() })) }),
    run: searchDatasetsTool,
  }),
  tool({
    name: 'get_dataset',
    title: 'A dataset',
    description: `A dataset's fields, its versions, and its converted recordings: count, subjects, hours, and the first ${DATASET_LISTED} (paths, groups, rates, channels, durations); when there are more, list_recordings with dataset and cursor set to recordings.next_cursor gives the rest. Also the first ${DATASET_LISTED} recordings that could not be converted, with why, and failure_count.`,
    input: GetDatasetInput,
    output: loose({ dataset: loose({ id: z.string() }), versions: z.array(loose({})), recordings: loose({ count: z.number(), next_cursor: z.string().nullable() }), failures: z.array(loose({})), failure_count: z.number() }),
    run: getDatasetTool,
  }),
  tool({
    name: 'list_recordings',
    title: 'List recordings',
    description: 'Recordings across datasets (or of one, with dataset), filtered by BIDS entities, rate, channel counts and labels, duration and event types: channels, groups, event counts. Page with next_cursor.',
    input: ListRecordingsInput,
    output: loose({ recordings: z.array(loose({ dataset_id: z.string(), path: z.string() })), next_cursor: z.string().nullable() }),
    run: listRecordingsTool,
  }),
  tool({
    name: 'get_events',
    title: 'Events of a recording',
    description: "A recording's events (from its _events.tsv): onset and duration in seconds, sample, trial_type and value; filter by trial_type and time.",
    input: EventsInput,
    output: loose({ total: z.number(), truncated: z.boolean(), events: z.array(loose({ onset: z.number(), duration: z.number(), sample: z.number() })) }),
    run: getEventsTool,
  }),
  tool({
    name: 'read_window',
    title: 'Read a window of samples',
    description: 'Exact samples of some channels of a recording over a span of time, in physical units (float32, not rounded): json gives numbers (at most 100,000 channel-samples); npy gives a NumPy file as an embedded resource (at most 4,194,304) and a link to the same window at the HTTP API. Optional resampling.',
    input: ReadWindowInput,
    output: loose({ channels: z.array(z.string()), units: z.array(z.string()), rate: z.number(), start_sample: z.number(), shape: z.tuple([z.number(), z.number()]), format: z.enum(['json', 'npy']), data: z.array(z.array(z.number())).optional() }),
    run: readWindowTool,
  }),
  tool({
    name: 'summarize_window',
    title: 'Summarize a window',
    description: 'Per channel over a window: min, max, mean, standard deviation, line-noise power at 50 and 60 Hz, the dominant frequency and the power in the delta, theta, alpha, beta and gamma bands (Welch PSD), and flags: flat, clipped, bad in channels.tsv.',
    input: SummarizeInput,
    output: loose({ rate: z.number(), channels: z.array(loose({ label: z.string(), dominant_hz: z.number().nullable() })) }),
    run: summarizeWindowTool,
  }),
  tool({
    name: 'plot_window',
    title: 'Plot a window',
    description: "A PNG of a window (at most 60 s) drawn as the nds viewer draws it: one row per channel at a fixed µV per division per channel type, labels, time axis and events; optional high-pass, low-pass, notch and reference. With the viewer's URL that opens the same view.",
    input: PlotInput,
    output: loose({ viewer_url: z.string(), width: z.number(), height: z.number(), rows: z.array(z.string()) }),
    run: plotWindowTool,
  }),
];

/** A tool's handler, with refusals turned into tool errors (`tool-answer.ts`). */
function guarded<A>(ctx: ToolContext, name: string, run: (ctx: ToolContext, args: A) => Promise<CallToolResult | Record<string, unknown>>) {
  return async (args: A): Promise<CallToolResult> => {
    try {
      const result = await run(ctx, args);
      return 'content' in result && Array.isArray(result.content) ? (result as CallToolResult) : answer(result);
    } catch (err) {
      return refusal(err, ctx.deps.log, name);
    }
  };
}

/**
 * A refusal of a resource request as a protocol error whose data is the HTTP API's error body: -32002 for an
 * unknown resource (MCP's "resource not found"), -32602 for a request it refuses, and -32000 (one of the codes
 * JSON-RPC 2.0 leaves to servers for their own errors) for a limit or an outage, after which the same request
 * may succeed.
 */
function resourceError(err: unknown): unknown {
  if (!(err instanceof NdsError)) return err;
  const code = err.status === 404 ? -32002 : err.status < 500 && err.status !== 429 ? ErrorCode.InvalidParams : -32000;
  return new McpError(code, err.message, err.toBody());
}

/** A resource read: the JSON of `read`, or the resource's protocol error (`resourceError`). */
async function jsonResource(uri: URL, read: () => Promise<unknown>): Promise<ReadResourceResult> {
  try {
    return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await read()) }] };
  } catch (err) {
    throw resourceError(err);
  }
}

const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? (v[0] ?? '') : (v ?? ''));

export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION }, { instructions });
  const readOnly = { readOnlyHint: true, openWorldHint: false } as const;

  for (const { name, title, description, input, output, run } of TOOLS) {
    server.registerTool(name, { title, description, inputSchema: input, outputSchema: output, annotations: readOnly }, guarded(ctx, name, run));
  }

  server.registerResource(
    'dataset',
    new ResourceTemplate('nds://datasets/{id}', {
      list: async () => {
        const { datasets } = await listDatasets(ctx.deps.db, ctx.user, { scope: 'visible', limit: LISTED_RESOURCES });
        return { resources: datasets.map((d) => ({ uri: `nds://datasets/${d.id}`, name: d.name, mimeType: 'application/json' })) };
      },
    }),
    { title: 'A dataset', description: 'What get_dataset answers, as a resource', mimeType: 'application/json' },
    (uri, { id }) => jsonResource(uri, () => getDatasetTool(ctx, { dataset_id: one(id) })),
  );
  server.registerResource(
    'recording',
    new ResourceTemplate('nds://datasets/{id}/recordings/{+path}', {
      // A walk of the catalogue, as `GET /recordings`: it spends the anonymous budget, once a `resources/list`.
      list: async () => {
        try {
          await ctx.spendCatalogueCall();
        } catch (err) {
          throw resourceError(err);
        }
        const { recordings } = await listRecordings(ctx.deps, ctx.user, {}, { limit: LISTED_RESOURCES });
        return { resources: recordings.map((r) => ({ uri: `nds://datasets/${r.dataset_id}/recordings/${r.path}`, name: `${r.dataset_id} ${r.path}`, mimeType: 'application/json' })) };
      },
    }),
    { title: 'A recording', description: 'One recording of the catalogue: entities, channel groups with channels, events counts, its Zarr store', mimeType: 'application/json' },
    (uri, { id, path }) => jsonResource(uri, () => recordingAt(ctx.deps, ctx.user, one(id), one(path))),
  );
  return server;
}
