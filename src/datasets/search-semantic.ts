/**
 * Semantic ranking: the query is embedded by an OpenAI-compatible `/embeddings` endpoint (EMBEDDINGS_URL)
 * and the visible datasets are ranked by cosine similarity to it. Datasets are embedded by a background job
 * (`search-embeddings.ts`, decision 0023), never here: a dataset not embedded yet is not ranked. Where
 * pgvector exists (PGlite; a server with the package), an HNSW index of the model's size ranks them;
 * without it the SQL function `nds_cosine` scans every embedding (seconds at 10,000 datasets).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import type { Dataset } from './dataset-queries.js';
import { and, facetCounts, searchConditions, type Facets, type SearchInput } from './search-filters.js';
import { embedTexts } from './embeddings-client.js';

export type SemanticRanking =
  | { ok: true; backend: 'pgvector' | 'sql'; total: number; rows: Array<Dataset & { score: number }>; facets: Facets }
  | { ok: false; reason: string };

/** Which similarity the database offers; asked once by each process, at start (`lifecycle.ts`). */
export async function vectorSimilarityOf(db: Kysely<Database>): Promise<'pgvector' | 'sql'> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_extension where extname = 'vector'`.execute(db);
  return rows[0]!.n > 0 ? 'pgvector' : 'sql';
}

/** The text a dataset is embedded from: what a person would read about it. */
export function embeddingText(d: Pick<Dataset, 'name' | 'description' | 'keywords' | 'authors' | 'tasks' | 'modalities' | 'sampling_rates' | 'channel_counts'>): string {
  return [
    d.name,
    d.description,
    d.keywords.length ? `Keywords: ${d.keywords.join(', ')}` : '',
    d.tasks.length ? `Tasks: ${d.tasks.join(', ')}` : '',
    d.modalities.length ? `Modalities: ${d.modalities.join(', ')}` : '',
    d.sampling_rates.length ? `Sampling rates: ${d.sampling_rates.map((r) => `${r} Hz`).join(', ')}` : '',
    d.channel_counts.length ? `Channels: ${d.channel_counts.join(', ')}` : '',
    d.authors.length ? `Authors: ${d.authors.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

const pgArray = (v: number[]) => `{${v.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}}`;

/** The sizes with an HNSW index (migration 2026-11-27-1801-embedding-index); others rank by an exact scan. */
export const HNSW_DIMENSIONS: readonly number[] = [256, 384, 512, 768, 1024, 1536];
/** Past this many rows (offset + limit), HNSW cannot be asked for them: an exact scan ranks them. */
const HNSW_MAX_ROWS = 1000;

type Row = Dataset & { score: number };

/**
 * Datasets in HNSW order (pgvector, an indexed size): the index's walk filtered by `where`, kept going until
 * `k` rows pass (pgvector's iterative scan, in strict order), so visibility and facets never empty a page.
 */
async function nearestByIndex(deps: Pick<Deps, 'db'>, where: RawBuilder<unknown>[], query: number[], k: number): Promise<Row[]> {
  const dims = sql.raw(String(query.length));
  const vector = sql`${JSON.stringify(query)}::vector(${dims})`;
  return deps.db.transaction().execute(async (trx) => {
    await sql`select set_config('hnsw.ef_search', ${String(Math.max(40, k))}, true), set_config('hnsw.iterative_scan', 'strict_order', true)`.execute(trx);
    const { rows } = await sql<Row>`
      select d.*, u.username as owner_username, (1 - (e.embedding::vector(${dims}) <=> ${vector}))::float8 as score
      from dataset_embeddings e join datasets d on d.id = e.dataset_id join users u on u.id = d.owner_id
      where ${and(where)} and array_length(e.embedding, 1) = ${query.length}
      order by e.embedding::vector(${dims}) <=> ${vector}
      limit ${k}`.execute(trx);
    return rows;
  });
}

/** Ranks visible datasets by similarity to the query; `ok: false` says why it could not (the caller falls back). */
export async function semanticRanking(deps: Pick<Deps, 'db' | 'config' | 'log' | 'vectorSimilarity'>, viewer: User | undefined, input: SearchInput): Promise<SemanticRanking> {
  if (!deps.config.embeddingsUrl) return { ok: false, reason: 'embeddings_not_configured: EMBEDDINGS_URL is not set' };
  if (!input.q.trim()) return { ok: false, reason: 'empty_query: there is nothing to embed' };
  const where = searchConditions(viewer, input);
  let query: number[];
  try {
    [query] = await embedTexts(deps.config, [input.q.trim()]);
  } catch (err) {
    deps.log.warn({ err }, 'embeddings endpoint failed; falling back to full text');
    return { ok: false, reason: `embeddings_unavailable: ${(err as Error).message}` };
  }
  const backend = deps.vectorSimilarity;
  const ranked = [...where, sql`e.model = ${deps.config.embeddingsModel}`];
  const title = input.q.trim();
  const rank = async (): Promise<Row[]> => {
    // A dataset named exactly as the query comes first, then the nearest others.
    const { rows: exact } = await sql<Row>`
      select d.*, u.username as owner_username, 1::float8 as score
      from datasets d join users u on u.id = d.owner_id join dataset_embeddings e on e.dataset_id = d.id
      where ${and(ranked)} and lower(d.name) = lower(${title}) order by d.id limit ${input.offset + input.limit}`.execute(deps.db);
    const others = [...ranked, sql`lower(d.name) <> lower(${title})`];
    const k = input.offset + input.limit - Math.min(exact.length, input.offset + input.limit);
    let nearest: Row[];
    if (backend === 'pgvector' && HNSW_DIMENSIONS.includes(query.length) && input.offset + input.limit <= HNSW_MAX_ROWS) {
      nearest = k > 0 ? await nearestByIndex(deps, others, query, k) : [];
    } else {
      const similarity = backend === 'pgvector' ? sql`1 - (e.embedding::vector <=> ${JSON.stringify(query)}::vector)` : sql`nds_cosine(e.embedding, ${pgArray(query)}::real[])`;
      ({ rows: nearest } = await sql<Row>`
        select d.*, u.username as owner_username, coalesce(${similarity}, 0)::float8 as score
        from datasets d join users u on u.id = d.owner_id join dataset_embeddings e on e.dataset_id = d.id
        where ${and(others)}
        order by score desc, d.id
        limit ${Math.max(k, 0)}`.execute(deps.db));
    }
    return [...exact, ...nearest].slice(input.offset, input.offset + input.limit);
  };
  // The ranking and the facets are queries on two connections (one after the other on PGlite).
  const [rows, { total, facets }] = await Promise.all([rank(), facetCounts(deps, where)]);
  return { ok: true, backend, total, rows, facets };
}
