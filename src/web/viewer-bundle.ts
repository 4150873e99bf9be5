/**
 * Serves the viewer's browser code: `src/web/viewer/main.ts` bundled by esbuild on first request, then
 * kept in memory with ETags. Code splitting keeps the codecs (WebAssembly inlined in numcodecs) out of
 * the entry, so a page loads only the codec its store uses.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { AppEnv } from '../http/app-env.js';

export const viewerScriptPath = '/assets/viewer.js';

interface Asset {
  code: string;
  etag: string;
}

/** Output files by URL path (`/assets/viewer.js`, `/assets/viewer-<hash>.js`). */
type Bundle = Map<string, Asset>;

let bundle: Promise<Bundle> | undefined;

/** Builds the bundle once per process; a failed build is retried on the next request. */
export function viewerBundle(): Promise<Bundle> {
  bundle ??= buildBundle().catch((err: unknown) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

async function buildBundle(): Promise<Bundle> {
  const { build } = await import('esbuild');
  const entry = fileURLToPath(new URL('./viewer/main.ts', import.meta.url));
  const outdir = '/nds-viewer-out';
  const result = await build({
    entryPoints: { viewer: entry },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    outdir,
    chunkNames: 'viewer-[hash]',
    logLevel: 'silent',
  });
  const out: Bundle = new Map();
  for (const file of result.outputFiles) {
    const code = file.text;
    out.set(`/assets${file.path.slice(outdir.length)}`, { code, etag: `"${createHash('sha256').update(code).digest('hex').slice(0, 32)}"` });
  }
  return out;
}

export function viewerBundleRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get('/assets/:file{viewer(?:-[A-Za-z0-9]+)?\\.js}', async (c) => {
    const asset = (await viewerBundle()).get(c.req.path);
    if (!asset) return c.notFound();
    const { code, etag } = asset;
    if (c.req.header('if-none-match') === etag) return c.body(null, 304, { etag });
    return c.body(code, 200, { 'content-type': 'text/javascript; charset=utf-8', etag, 'cache-control': 'no-cache' });
  });
  return app;
}
