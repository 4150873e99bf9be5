/** `POST /windows`: a deterministic list of training windows (fixed or event-locked, optionally split), as JSON, NDJSON or CSV. */
import { z } from '@hono/zod-openapi';
import { jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { listWindows, WINDOW_COLUMNS, windowCsvLine } from '../recordings/window-lists.js';
import { RecordingFiltersSchema } from './recording-schemas.js';

const seconds = z.number().positive().max(1e6);
/** A label as the mapping gives it: a string, or an integer class index (kept an integer in JSON, NDJSON and CSV). */
const Label = z.union([z.string().max(200), z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1)]);

const WindowsBody = z
  .object({
    recordings: RecordingFiltersSchema.default({ channel: undefined }),
    fixed: z.object({ length_s: seconds, stride_s: seconds.optional() }).strict().optional(),
    events: z
      .object({
        mapping: z.record(z.string().max(200), Label).openapi({ description: 'Event trial_type (or value) → label: a string or an integer class index' }).refine((m) => Object.keys(m).length > 0 && Object.keys(m).length <= 1000, 'one to 1000 entries'),
        by: z.enum(['trial_type', 'value']).default('trial_type'),
        offset_s: z.number().min(-1e6).max(1e6).default(0),
        length_s: seconds,
      })
      .strict()
      .optional(),
    split: z
      .object({
        by: z.enum(['subject', 'session', 'recording']).default('subject'),
        fractions: z.object({ train: z.number().min(0).max(1), valid: z.number().min(0).max(1), test: z.number().min(0).max(1) }).refine((f) => f.train + f.valid + f.test > 0, 'fractions must not all be zero'),
        seed: z.union([z.number().int(), z.string().max(100)]).default(0),
      })
      .strict()
      .optional(),
    modality: z.string().trim().toLowerCase().max(20).optional().openapi({ description: 'Count samples in the group of this modality (default: the first group)' }),
  })
  .strict()
  .refine((b) => !b.fixed !== !b.events, 'give either fixed or events')
  .openapi('WindowsRequest');

const Window = z.object({
  dataset_id: z.string(),
  path: z.string(),
  group: z.string(),
  start_sample: z.number().int(),
  n_samples: z.number().int(),
  start_s: z.number(),
  label: Label.nullable(),
  subject: z.string().nullable(),
  session: z.string().nullable(),
  split: z.enum(['train', 'valid', 'test']).nullable(),
});

const WindowsAnswer = z
  .object({
    hash: z.string(),
    source_commits: z.record(z.string(), z.string().nullable()),
    windows: z.array(Window),
    warnings: z.array(z.string()).openapi({ description: 'What the list lacks: no recording, no event of the mapping (with the event types the recordings have), a split left empty. Empty when nothing is amiss' }),
  })
  .openapi('WindowList');

export const windowRoutes: Route[] = [
  route({
    method: 'post',
    path: '/windows',
    summary:
      'List training windows over the recordings a filter selects: fixed or event-locked, optionally split by subject, session or recording (JSON, NDJSON or CSV by Accept). An empty list is a 200 with `warnings`; NDJSON carries them on its first line, CSV in `X-NDS-Warnings` (a percent-encoded JSON array)',
    access: 'optional',
    body: { schema: WindowsBody },
    responses: { 200: jsonResponse(WindowsAnswer, 'The windows, with a hash of the request and the source commits it read') },
    handler: async (c, { body }) => {
      const list = await listWindows(c.var.deps, c.var.caller?.user, body);
      const accept = (c.req.header('accept') ?? '').toLowerCase();
      const headers = {
        'X-NDS-Windows-Hash': list.hash,
        // Header values are ASCII: event types are not.
        'X-NDS-Warnings': encodeURIComponent(JSON.stringify(list.warnings)),
        'Access-Control-Expose-Headers': 'X-NDS-Windows-Hash, X-NDS-Warnings',
      };
      if (accept.includes('application/x-ndjson')) {
        const lines = [JSON.stringify({ hash: list.hash, source_commits: list.source_commits, n_windows: list.windows.length, warnings: list.warnings }), ...list.windows.map((w) => JSON.stringify(w))];
        return c.body(`${lines.join('\n')}\n`, 200, { ...headers, 'Content-Type': 'application/x-ndjson' });
      }
      if (accept.includes('text/csv')) {
        return c.body(`${[WINDOW_COLUMNS.join(','), ...list.windows.map(windowCsvLine)].join('\n')}\n`, 200, { ...headers, 'Content-Type': 'text/csv; charset=utf-8' });
      }
      return c.json(list, 200, headers);
    },
  }),
];
