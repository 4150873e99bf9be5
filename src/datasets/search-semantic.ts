/**
 * Semantic ranking: the query and each visible dataset's text are embedded by an OpenAI-compatible
 * `/embeddings` endpoint (EMBEDDINGS_URL) and ranked by cosine similarity. Dataset embeddings are made
 * lazily, when missing or stale (their text's SHA-256 changed), at most `EMBED_BATCH` a search.
 * Similarity is computed by pgvector when the extension exists (the PostgreSQL server with Debian's
 * package), else by the SQL function `nds_cosine` over the same real[] column (PGlite): one function
 * below hides which.
 */
import { sql, type Kysely } from 'kysely';
import type { User } from '../db/accounts-tables.js';
import type { Database } from '../db/types.js';
import type { Deps } from '../deps.js';
import { sha256Hex } from '../core/secrets.js';
import type { Dataset } from './dataset-queries.js';
import { and, facetCounts, searchConditions, type Facets, type SearchInput } from './search-filters.js';
import { embedTexts } from './embeddings-client.js';

/** Datasets embedded during one search, at most; the rest wait for later searches. */
const EMBED_BATCH = 256;

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

async function embedMissing(deps: Pick<Deps, 'db' | 'config'>, where: ReturnType<typeof searchConditions>): Promise<void> {
  const model = deps.config.embeddingsModel;
  const { rows } = await sql<Dataset & { text_sha256: string | null; model: string | null }>`
    select d.*, e.text_sha256, e.model from datasets d left join dataset_embeddings e on e.dataset_id = d.id
    where ${and(where)}`.execute(deps.db);
  const stale = rows
    .map((d) => ({ id: d.id, text: embeddingText(d), had: d.text_sha256, model: d.model }))
    .map((d) => ({ ...d, sha: sha256Hex(d.text) }))
    .filter((d) => d.had !== d.sha || d.model !== model)
    .slice(0, EMBED_BATCH);
  if (stale.length === 0) return;
  const vectors = await embedTexts(deps.config, stale.map((d) => d.text));
  for (const [i, d] of stale.entries()) {
    await sql`
      insert into dataset_embeddings (dataset_id, model, text_sha256, embedding, updated_at)
      values (${d.id}, ${model}, ${d.sha}, ${pgArray(vectors[i])}::real[], now())
      on conflict (dataset_id) do update set model = excluded.model, text_sha256 = excluded.text_sha256,
        embedding = excluded.embedding, updated_at = excluded.updated_at`.execute(deps.db);
  }
}

/** Ranks visible datasets by similarity to the query; `ok: false` says why it could not (the caller falls back). */
export async function semanticRanking(deps: Pick<Deps, 'db' | 'config' | 'log' | 'vectorSimilarity'>, viewer: User | undefined, input: SearchInput): Promise<SemanticRanking> {
  if (!deps.config.embeddingsUrl) return { ok: false, reason: 'embeddings_not_configured: EMBEDDINGS_URL is not set' };
  if (!input.q.trim()) return { ok: false, reason: 'empty_query: there is nothing to embed' };
  const where = searchConditions(viewer, input);
  let query: number[];
  try {
    [query] = await embedTexts(deps.config, [input.q.trim()]);
    await embedMissing(deps, where);
  } catch (err) {
    deps.log.warn({ err }, 'embeddings endpoint failed; falling back to full text');
    return { ok: false, reason: `embeddings_unavailable: ${(err as Error).message}` };
  }
  const backend = deps.vectorSimilarity;
  const similarity =
    backend === 'pgvector'
      ? sql`1 - (e.embedding::vector <=> ${JSON.stringify(query)}::vector)`
      : sql`nds_cosine(e.embedding, ${pgArray(query)}::real[])`;
  const ranked = [...where, sql`e.model = ${deps.config.embeddingsModel}`];
  const { rows } = await sql<Dataset & { score: number }>`
    select d.*, u.username as owner_username, coalesce(${similarity}, 0)::float8 as score
    from datasets d join users u on u.id = d.owner_id join dataset_embeddings e on e.dataset_id = d.id
    where ${and(ranked)}
    order by (lower(d.name) = lower(${input.q.trim()})) desc, score desc, d.id
    limit ${input.limit} offset ${input.offset}`.execute(deps.db);
  const { total, facets } = await facetCounts(deps, where);
  return { ok: true, backend, total, rows, facets };
}
