/**
 * Where the idle memory of `nds serve` goes (issue 14): `process.memoryUsage()` after each stage of starting
 * the server as `nds serve` does (PGlite on disk, folder store), after a collection. Run with --expose-gc:
 *   node --expose-gc --import tsx bench/ml-memory.ts
 * (twice with the same NDS_MEM_DIR=<folder> to see a server opening an existing database)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mib = (b: number) => (b / 2 ** 20).toFixed(0).padStart(5);
const rows: string[] = [];
const stage = async (name: string) => {
  for (let i = 0; i < 3; i++) {
    global.gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const m = process.memoryUsage();
  rows.push(`| ${name} | ${mib(m.rss)} | ${mib(m.heapUsed)} | ${mib(m.external)} | ${mib(m.arrayBuffers)} |`);
};
// NDS_MEM_DIR: a folder kept between runs, so a second run opens an existing database (as a restarted server does).
const kept = process.env.NDS_MEM_DIR;
const work = kept ?? (await mkdtemp(join(tmpdir(), 'nds-bench-mlmem-')));
try {
  await stage('node + tsx, nothing loaded');
  const { loadConfig } = await import('../src/core/config.js');
  const { startServer } = await import('../src/server.js');
  await stage('server modules imported');
  const config = loadConfig({ DATABASE_URL: `pglite:${join(work, 'db')}`, OBJECT_STORE_URL: `file:${join(work, 'objects')}`, DATA_DIR: join(work, 'data'), PORT: '0', PUBLIC_URL: 'http://127.0.0.1:1', LOG_LEVEL: 'warn', ...(process.env.NDS_MEM_ENV ? JSON.parse(process.env.NDS_MEM_ENV) : {}) });
  const server = await startServer({ config });
  await stage('startServer (PGlite opened and migrated, worker, app)');
  const { zstdEncoder } = await import('../src/formats/zarr/chunk-codec.js');
  await stage('chunk-codec imported');
  process.stderr.write(`zstd encoder: ${(await zstdEncoder()).kind}\n`);
  await stage('zstd encoder loaded (as nds serve does at start)');
  await fetch(`${server.url.replace('localhost', '127.0.0.1')}/`).then((r) => r.arrayBuffer());
  await stage('after GET / (home page)');
  await server.close();
  await stage('server closed');
  console.log('| stage | rss MiB | heapUsed | external | arrayBuffers |\n|---|---:|---:|---:|---:|\n' + rows.join('\n'));
} finally {
  if (!kept) await rm(work, { recursive: true, force: true });
}
