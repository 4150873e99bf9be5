/**
 * Semantic search at 10,000 datasets (issue 24, decision 0023), run by `bench/scale.ts` after the catalogue:
 * PGlite (pgvector, HNSW on `real[]::vector(n)`) and the PostgreSQL server of `--url` (pgvector when it has
 * the package, else the `nds_cosine` scan), each filled by SQL with 10,000 datasets (80 % public) and a
 * random 384-float embedding each. A local endpoint answers the query's embedding (the network edge), so
 * the figures are the database's ranking, facets and the request to the endpoint. p50/p95 of the first
 * page and of the next (offset) page, anonymous, limit 25. Goal: p95 ≤ 50 ms.
 */
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import type { Config } from '../src/core/config.js';
import { createLogger } from '../src/core/log.js';
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { searchDatasets } from '../src/datasets/search.js';
import { vectorSimilarityOf } from '../src/datasets/search-semantic.js';

const DIMS = 384;
const N = 10_000;

/** `postgresUrl` names a database of its own for these datasets (created when missing). */
export async function benchSemantic(postgresUrl: string, runs: number): Promise<void> {
  const admin = new URL(postgresUrl);
  const dbName = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const root = new pg.Client({ connectionString: admin.toString() });
  await root.connect();
  if ((await root.query('select 1 from pg_database where datname = $1', [dbName])).rowCount === 0) await root.query(`create database ${dbName}`);
  await root.end();
  const query = Array.from({ length: DIMS }, (_, i) => Math.sin(i + 1));
  const endpoint = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: [{ index: 0, embedding: query }] })));
  });
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(endpoint.address() as { port: number }).port}/v1`;
  const config = { embeddingsUrl: url, embeddingsModel: 'bench', embeddingsApiKey: undefined } as unknown as Config;
  const log = createLogger('error');
  console.log(`\nsemantic search: ${N} datasets, ${DIMS}-float embeddings, limit 25, anonymous, ${runs} runs a figure`);
  console.log('| database | ranking | first p50 | first p95 | next p50 | next p95 | goal |');
  console.log('|---|---|---:|---:|---:|---:|---|');
  for (const [name, target] of [['PGlite', 'pglite:memory'], ['PostgreSQL', postgresUrl]] as const) {
    const handle: DatabaseHandle = await connectDatabase(target);
    try {
      await migrateToLatest(handle.db);
      const { db } = handle;
      const have = await sql<{ n: number }>`select count(*)::int as n from dataset_embeddings where model = 'bench'`.execute(db);
      if (have.rows[0]!.n !== N) {
        if ((await sql<{ n: number }>`select count(*)::int as n from users where id = 1`.execute(db)).rows[0]!.n === 0) {
          await sql`insert into users (username, email, status) values ('semantic', 'semantic@example.org', 'approved')`.execute(db);
        }
        await sql`delete from dataset_embeddings`.execute(db);
        await sql`insert into datasets (id, name, owner_id, visibility) select 'sb' || lpad(i::text, 6, '0'), 'Semantic ' || i, (select min(id) from users),
          case when i % 5 = 0 then 'private' else 'public' end from generate_series(1, ${N}) i on conflict (id) do nothing`.execute(db);
        await sql`insert into dataset_embeddings (dataset_id, model, text_sha256, embedding)
          select 'sb' || lpad(i::text, 6, '0'), 'bench', 'x', array(select (random() - 0.5)::real from generate_series(1, ${DIMS}) where i > 0)
          from generate_series(1, ${N}) i`.execute(db);
        await sql`analyze`.execute(db);
      }
      const backend = await vectorSimilarityOf(db);
      const deps = { db, config, log, vectorSimilarity: backend };
      const times = async (offset: number, n: number) => {
        const out: number[] = [];
        for (let i = 0; i < n + 1; i++) {
          const t0 = performance.now();
          const r = await searchDatasets(deps, undefined, { q: 'spindles during sleep', mode: 'semantic', limit: 25, offset });
          if (r.mode_used !== 'semantic' || r.hits.length !== 25) throw new Error(`semantic search answered ${r.mode_used} with ${r.hits.length} hits: ${r.fallback_reason}`);
          if (i > 0) out.push(performance.now() - t0);
        }
        return out.sort((a, b) => a - b);
      };
      const n = backend === 'pgvector' ? runs : 3;
      const first = await times(0, n);
      const next = await times(25, n);
      const p = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor((q / 100) * xs.length))]!.toFixed(1);
      const met = Number(p(first, 95)) <= 50 && Number(p(next, 95)) <= 100;
      console.log(`| ${name} | ${backend === 'pgvector' ? 'pgvector HNSW' : 'nds_cosine scan (no pgvector here)'} | ${p(first, 50)} | ${p(first, 95)} | ${p(next, 50)} | ${p(next, 95)} | ${met ? 'met' : '**missed**'} |`);
    } finally {
      await handle.close();
    }
  }
  endpoint.close();
}
