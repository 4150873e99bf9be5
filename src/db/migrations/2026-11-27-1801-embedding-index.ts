/**
 * Semantic search at scale (decision 0023): a dataset's embedding is made by a background job, never during a
 * search. `stale` is set by a trigger in the statement that changes any text the embedding is made from, so
 * the job finds its work through an index instead of hashing every dataset's text. Where pgvector exists, the
 * real[] column is ranked through HNSW indexes on its cast to `vector(n)`, one partial index for each of the
 * common model sizes (an HNSW index needs a fixed dimension, and the model is a setting): a search with
 * another size, or without pgvector, ranks by an exact scan.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('dataset_embeddings').addColumn('stale', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
  await sql`create index dataset_embeddings_stale on dataset_embeddings (dataset_id) where stale`.execute(db);
  await sql`
    create function dataset_embedding_stale() returns trigger language plpgsql as $$
    begin
      update dataset_embeddings set stale = true where dataset_id = new.id and not stale;
      return null;
    end $$`.execute(db);
  // The columns of datasets/search-semantic.ts embeddingText.
  await sql`
    create trigger datasets_embedding_stale after update on datasets for each row
    when (old.name is distinct from new.name or old.description is distinct from new.description
      or old.keywords is distinct from new.keywords or old.authors is distinct from new.authors
      or old.tasks is distinct from new.tasks or old.modalities is distinct from new.modalities
      or old.sampling_rates is distinct from new.sampling_rates or old.channel_counts is distinct from new.channel_counts)
    execute function dataset_embedding_stale()`.execute(db);
  await sql`
    do $$
    declare n int;
    begin
      if exists (select 1 from pg_extension where extname = 'vector') then
        foreach n in array array[256, 384, 512, 768, 1024, 1536] loop
          execute format('create index dataset_embeddings_hnsw_%s on dataset_embeddings using hnsw ((embedding::vector(%s)) vector_cosine_ops) where array_length(embedding, 1) = %s', n, n, n);
        end loop;
      end if;
    end $$`.execute(db);
}
