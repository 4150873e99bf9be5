/**
 * The background job of semantic search (decision 0023): embeds the datasets that have no embedding, whose
 * embedding is stale (a trigger marks it when the dataset's text changes) or was made by another model, a
 * batch at a time, so that a search only ever embeds its own query. `nds serve` runs it every
 * `EMBEDDINGS_REFRESH_S` seconds while an embeddings endpoint is configured.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { sha256Hex } from '../core/secrets.js';
import { runPeriodically, type Periodic } from '../core/periodic.js';
import type { Dataset } from './dataset-queries.js';
import { embedTexts } from './embeddings-client.js';
import { embeddingText } from './search-semantic.js';

/** Datasets embedded in one call of the endpoint. */
const EMBED_BATCH = 128;

const pgArray = (v: number[]) => `{${v.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}}`;

type EmbeddingDeps = Pick<Deps, 'db' | 'config'>;

/**
 * Embeds one batch of the datasets that need it; returns how many were looked at (0: nothing left). A dataset
 * whose text hashes as before is only marked fresh. Throws when the endpoint fails (nothing is marked then).
 */
export async function embedStaleDatasets(deps: EmbeddingDeps, batch = EMBED_BATCH): Promise<number> {
  const model = deps.config.embeddingsModel;
  const { rows } = await sql<Dataset & { text_sha256: string | null; model: string | null }>`
    select d.id, d.name, d.description, d.keywords, d.authors, d.tasks, d.modalities, d.sampling_rates, d.channel_counts,
      e.text_sha256, e.model
    from datasets d left join dataset_embeddings e on e.dataset_id = d.id
    where e.dataset_id is null or e.stale or e.model <> ${model}
    order by d.id limit ${batch}`.execute(deps.db);
  if (rows.length === 0) return 0;
  const texts = rows.map((d) => ({ id: d.id, row: d, text: embeddingText(d), had: d.text_sha256, model: d.model })).map((d) => ({ ...d, sha: sha256Hex(d.text) }));
  const unchanged = texts.filter((d) => d.had === d.sha && d.model === model);
  if (unchanged.length > 0) await sql`update dataset_embeddings set stale = false where dataset_id = any(${sql.val(unchanged.map((d) => d.id))}::text[])`.execute(deps.db);
  const changed = texts.filter((d) => !(d.had === d.sha && d.model === model));
  if (changed.length === 0) return rows.length;
  const vectors = await embedTexts(deps.config, changed.map((d) => d.text));
  for (const [i, d] of changed.entries()) {
    // Text changed while the endpoint answered: the row stays stale, and the next round embeds it again.
    const r = d.row;
    const changedSince = sql`coalesce((select (x.name, x.description, x.keywords, x.authors, x.tasks, x.modalities, x.sampling_rates, x.channel_counts)
      is distinct from (${r.name}::text, ${r.description}::text, ${sql.val(r.keywords)}::text[], ${sql.val(r.authors)}::text[], ${sql.val(r.tasks)}::text[],
        ${sql.val(r.modalities)}::text[], ${sql.val(r.sampling_rates.map(Number))}::float8[], ${sql.val(r.channel_counts.map(Number))}::int[])
      from datasets x where x.id = ${d.id}), false)`;
    await sql`
      insert into dataset_embeddings (dataset_id, model, text_sha256, embedding, updated_at, stale)
      values (${d.id}, ${model}, ${d.sha}, ${pgArray(vectors[i]!)}::real[], now(), ${changedSince})
      on conflict (dataset_id) do update set model = excluded.model, text_sha256 = excluded.text_sha256,
        embedding = excluded.embedding, updated_at = excluded.updated_at, stale = excluded.stale`.execute(deps.db);
  }
  return rows.length;
}

/** Its `tick` runs one round now: batches until none is left or the endpoint fails (logged). */
export type EmbeddingRefresher = Periodic;

/** Runs `embedStaleDatasets` every `intervalMs` (first after one interval), one round at a time. */
export function startEmbeddingRefresher(deps: EmbeddingDeps & Pick<Deps, 'log'>, intervalMs: number): EmbeddingRefresher {
  return runPeriodically(
    async (stopped) => {
      try {
        while (!stopped() && (await embedStaleDatasets(deps)) > 0);
      } catch (err) {
        deps.log.warn({ err }, 'embedding refresh failed; the next round tries again');
      }
    },
    intervalMs,
    { startNow: false },
  );
}
