/** `GET /datasets/search` (docs/datasets.md): full text or semantic, with facets; public + the caller's own datasets. */
import { z } from '@hono/zod-openapi';
import { anonymousLimitResponse, countAnonymousCatalogueRequest } from '../http/catalogue-limits.js';
import { jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { presentDataset } from '../datasets/present-dataset.js';
import { DatasetSchema } from './dataset-schemas.js';
import { searchDatasets } from '../datasets/search.js';

const FacetCount = z.object({ value: z.string(), count: z.number().int() });

const SearchQuery = z.object({
  q: z.string().max(500).default('').openapi({ description: 'Words, an author, a task, "500 Hz", "64 channels"...' }),
  mode: z.enum(['fulltext', 'semantic']).default('fulltext'),
  modality: z.string().trim().toLowerCase().max(40).optional(),
  min_subjects: z.coerce.number().int().min(0).max(1_000_000).optional(),
  sampling_rate: z.coerce.number().positive().max(1_000_000).optional().openapi({ description: 'Only datasets with a recording at exactly this rate, Hz' }),
  rate: z.coerce.number().positive().max(1_000_000).optional().openapi({ description: 'The same as sampling_rate, named as in GET /recordings' }),
  task: z.string().trim().min(1).max(100).optional().openapi({ description: 'Only datasets with a recording of this BIDS task' }),
  subject: z.string().trim().min(1).max(100).optional().openapi({ description: 'Only datasets with a converted recording of this subject (without `sub-`)' }),
  rate_min: z.coerce.number().positive().max(1_000_000).optional().openapi({ description: 'Only datasets with a recording at this rate or above, Hz' }),
  rate_max: z.coerce.number().positive().max(1_000_000).optional().openapi({ description: 'Only datasets with a recording at this rate or below, Hz' }),
  limit: z.coerce.number().int().min(1).max(100).default(25),
  offset: z.coerce.number().int().min(0).max(10_000).default(0),
}).refine((q) => q.rate === undefined || q.sampling_rate === undefined || q.rate === q.sampling_rate, { message: 'rate and sampling_rate are one filter: give one, or the same value', path: ['rate'] });

const SearchAnswer = z
  .object({
    query: z.string(),
    mode: z.enum(['fulltext', 'semantic']),
    mode_used: z.enum(['fulltext', 'semantic']),
    fallback_reason: z.string().nullable(),
    vector_backend: z.enum(['pgvector', 'sql']).nullable(),
    total: z.number().int(),
    results: z.array(
      DatasetSchema.extend({
        score: z.number(),
        sampling_rates: z.array(z.number()),
        channel_counts: z.array(z.number().int()),
      }),
    ),
    facets: z.object({ modality: z.array(FacetCount), sampling_rate: z.array(FacetCount), min_subjects: z.array(FacetCount) }),
  })
  .openapi('SearchResults');

export const searchRoutes: Route[] = [
  route({
    method: 'get',
    path: '/datasets/search',
    summary: 'Search datasets: ranked full text (or semantic with mode=semantic) with facet filters and counts',
    access: 'optional',
    query: SearchQuery,
    responses: { 200: jsonResponse(SearchAnswer, 'Ranked results, facet counts, and the mode actually used'), 429: anonymousLimitResponse },
    handler: async (c, { query: q }) => {
      await countAnonymousCatalogueRequest(c);
      const { deps } = c.var;
      const outcome = await searchDatasets(deps, c.var.caller?.user, {
        q: q.q,
        mode: q.mode,
        modality: q.modality,
        minSubjects: q.min_subjects,
        samplingRate: q.rate ?? q.sampling_rate,
        task: q.task,
        subject: q.subject,
        rateMin: q.rate_min,
        rateMax: q.rate_max,
        limit: q.limit,
        offset: q.offset,
      });
      return c.json(
        {
          query: q.q,
          mode: q.mode,
          mode_used: outcome.mode_used,
          fallback_reason: outcome.fallback_reason,
          vector_backend: outcome.vector_backend,
          total: outcome.total,
          results: outcome.hits.map(({ dataset, score }) => ({
            ...presentDataset(dataset, deps.config),
            score,
            sampling_rates: dataset.sampling_rates.map(Number),
            channel_counts: dataset.channel_counts.map(Number),
          })),
          facets: outcome.facets,
        },
        200,
      );
    },
  }),
];
