/**
 * Reading recordings as data: `GET /datasets/:id/signal` (an exact window of samples in physical units, as
 * `.npy`, raw float32 or JSON) and `GET /datasets/:id/events` (every event with every `_events.tsv` column).
 */
import { z } from '@hono/zod-openapi';
import { jsonResponse } from '../http/openapi-helpers.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import { eventsCsv, recordingEvents } from '../recordings/recording-events.js';
import { MAX_JSON_VALUES, MAX_WINDOW_VALUES, planWindow, windowHeaders, windowJson, windowStream } from '../recordings/signal-window.js';
import type { WindowRequest } from '../client/index.js';
import { IdParam } from './dataset-schemas.js';
import type { Exactly } from './recording-schemas.js';
import { grantReadsDataset } from '../datasets/read-grant.js';

const labels = z
  .string()
  .max(20_000)
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .refine((v) => v.length > 0 && v.length <= 4096, 'one to 4096 comma-separated labels');

const SignalQuery = z.object({
  path: z.string().min(1).max(1000).openapi({ description: 'The BIDS path of the data file (or the store folder), as GET /recordings gives it' }),
  start: z.coerce.number().min(0).max(1e9).optional().openapi({ description: 'Window start, seconds from the first sample' }),
  duration: z.coerce.number().positive().max(1e9).optional().openapi({ description: 'Window length, seconds' }),
  start_sample: z.coerce.number().int().min(0).max(2 ** 48).optional(),
  n_samples: z.coerce.number().int().positive().max(2 ** 48).optional(),
  channels: labels.optional().openapi({ description: 'Comma-separated channel labels, in the order wanted' }),
  channel_type: z.string().trim().toUpperCase().max(20).optional().openapi({ description: 'Every channel of this type (EEG, EMG, EOG...)' }),
  group: z.string().max(100).optional().openapi({ description: 'The channel group (e.g. eeg_500hz) when the recording has several rates' }),
  format: z.enum(['npy', 'f32', 'json']).default('npy'),
  dtype: z.enum(['float32', 'float64']).default('float32').openapi({ description: 'Sample type of npy and json answers; f32 is always float32' }),
  rate: z.coerce.number().positive().max(1_000_000).optional().openapi({ description: 'Resample to this rate (polyphase, anti-aliased; see docs/api.md)' }),
  grant: z.string().max(200).optional().openapi({ description: "A read grant of the dataset (POST /datasets/:id/read-grant, or an MCP read_window's link): reads a private dataset without a key" }),
});

/** The query selects the client's `WindowRequest` (its dataset in the path), field for field: the type check fails when one drifts. */
const selectsTheClientsWindow: Exactly<Omit<z.output<typeof SignalQuery>, 'format' | 'dtype' | 'grant'>, Omit<WindowRequest, 'dataset_id'>> = true;
void selectsTheClientsWindow;

const EventsQuery = z.object({
  path: z.string().min(1).max(1000),
  group: z.string().max(100).optional().openapi({ description: 'Whose rate `sample` counts in (the first group when left out)' }),
  format: z.enum(['json', 'csv']).default('json'),
});

const EventsAnswer = z
  .object({ group: z.string().nullable(), events: z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))) })
  .openapi('RecordingEvents');

export const signalRoutes: Route[] = [
  route({
    method: 'get',
    path: `${DATASET_PATH}/signal`,
    summary: `An exact window of a recording in physical units (npy, f32 or json); at most ${MAX_WINDOW_VALUES} values (json: ${MAX_JSON_VALUES}), optional resampling`,
    access: 'optional',
    params: IdParam,
    query: SignalQuery,
    responses: {
      200: {
        description: 'The samples, [channels, samples]; headers X-NDS-Channels, X-NDS-Rate, X-NDS-Start-Sample, X-NDS-Shape',
        content: { 'application/x-npy': { schema: { type: 'string', format: 'binary' } }, 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
    },
    handler: async (c, { params, query }) => {
      const { deps } = c.var;
      const { channels, grant, format, dtype, ...selection } = query;
      const reader = grant !== undefined && (await grantReadsDataset(deps, grant, params.id)) ? { grant } : c.var.caller?.user;
      const plan = await planWindow(deps, reader, { dataset_id: params.id, ...selection, ...(channels ? { channels } : {}) }, { format, dtype });
      // A grant is a credential in the URL, on a request with no other sign of one (privateToCaller, app.ts):
      // what it reads is never kept by a shared cache, which would serve it after the grant had ended.
      const headers = { ...windowHeaders(plan), ...(reader && 'grant' in reader ? { 'Cache-Control': 'private, no-store' } : {}) };
      if (c.req.header('if-none-match') === plan.etag) return new Response(null, { status: 304, headers });
      if (query.format === 'json') {
        const data = await windowJson(deps, plan, query.dtype);
        return c.json({ channels: plan.rows.map((r) => plan.group.channels[r]!.label), rate: plan.rate, start_sample: plan.outStart, shape: [plan.rows.length, plan.outCount], data }, 200, headers);
      }
      const bytesPer = query.format === 'npy' && query.dtype === 'float64' ? 8 : 4;
      const body = windowStream(deps, plan, query.format, query.format === 'f32' ? 'float32' : query.dtype);
      return new Response(body, {
        status: 200,
        headers: {
          ...headers,
          'Content-Type': query.format === 'npy' ? 'application/x-npy' : 'application/octet-stream',
          ...(query.format === 'f32' ? { 'Content-Length': String(plan.rows.length * plan.outCount * bytesPer) } : {}),
        },
      });
    },
  }),
  route({
    method: 'get',
    path: `${DATASET_PATH}/events`,
    summary: "A recording's events: onset, duration, sample, trial_type, value and every other _events.tsv column (json or csv)",
    access: 'optional',
    params: IdParam,
    query: EventsQuery,
    responses: { 200: jsonResponse(EventsAnswer, 'The events in onset order') },
    handler: async (c, { params, query }) => {
      const answer = await recordingEvents(c.var.deps, c.var.caller?.user, params.id, query.path, query.group);
      if (query.format === 'csv') return c.body(eventsCsv(answer.events), 200, { 'Content-Type': 'text/csv; charset=utf-8' });
      return c.json(answer, 200);
    },
  }),
];
