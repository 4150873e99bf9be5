/**
 * `GET /datasets/search`: ranked full-text search over the weighted `search_vector` (name A; keywords,
 * authors, tasks B; description C; recording facts D), with facet filters and facet counts, and semantic
 * ranking by embeddings when an embeddings endpoint answers. Only public datasets and the caller's own
 * are ever considered, in every query, so a private dataset cannot leak through a hit, a count or a facet.
 */
import { sql } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Deps } from '../deps.js';
import type { Dataset } from './dataset-queries.js';
import { and, facetCounts, searchConditions, type Facets, type SearchInput } from './search-filters.js';
import { tsqueryText } from './search-query.js';
import { semanticRanking } from './search-semantic.js';

export interface SearchOutcome {
  mode_used: 'fulltext' | 'semantic';
  /** Why semantic mode was asked for and not used; null otherwise. */
  fallback_reason: string | null;
  /** How semantic ranking computed similarity: `pgvector` or `sql` (the nds_cosine function). */
  vector_backend: 'pgvector' | 'sql' | null;
  total: number;
  hits: Array<{ dataset: Dataset; score: number }>;
  facets: Facets;
}

async function fulltext(deps: Pick<Deps, 'db'>, viewer: User | undefined, input: SearchInput) {
  const where = searchConditions(viewer, input);
  const terms = tsqueryText(input.q);
  const query = sql`to_tsquery('english', ${terms})`;
  // A blank query names no title: the order is then the index's (updated_at desc, id), read as far as the page.
  const exact = input.q.trim() ? sql`lower(d.name) = lower(${input.q.trim()})` : sql`false`;
  if (terms) where.push(sql`(d.search_vector @@ ${query} or ${exact})`);
  // Weights of D, C, B, A: a title word counts ten times a recording fact.
  const score = terms ? sql`ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', d.search_vector, ${query})` : sql`0`;
  // The page and the facets are two queries on two connections (one after the other on PGlite).
  const [{ rows }, counted] = await Promise.all([
    sql<Dataset & { score: number; exact_title: boolean }>`
      select d.*, u.username as owner_username, ${score}::float8 as score, ${exact} as exact_title
      from datasets d join users u on u.id = d.owner_id
      where ${and(where)}
      order by exact_title desc, score desc, d.updated_at desc, d.id
      limit ${input.limit} offset ${input.offset}`.execute(deps.db),
    facetCounts(deps, where),
  ]);
  return { rows, ...counted };
}

export async function searchDatasets(deps: Pick<Deps, 'db' | 'config' | 'log' | 'vectorSimilarity'>, viewer: User | undefined, input: SearchInput): Promise<SearchOutcome> {
  let fallback: string | null = null;
  if (input.mode === 'semantic') {
    const ranked = await semanticRanking(deps, viewer, input);
    if (ranked.ok) {
      return {
        mode_used: 'semantic',
        fallback_reason: null,
        vector_backend: ranked.backend,
        total: ranked.total,
        hits: ranked.rows.map(({ score, ...dataset }) => ({ dataset: dataset as Dataset, score: Number(score) })),
        facets: ranked.facets,
      };
    }
    fallback = ranked.reason;
  }
  const found = await fulltext(deps, viewer, input);
  return {
    mode_used: 'fulltext',
    fallback_reason: fallback,
    vector_backend: null,
    total: found.total,
    hits: found.rows.map(({ score, exact_title: _exact, ...dataset }) => ({ dataset: dataset as Dataset, score: Number(score) })),
    facets: found.facets,
  };
}
