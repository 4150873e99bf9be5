/**
 * Serves the viewer's browser code: `src/web/viewer/main.ts` bundled by esbuild on first request, then
 * kept in memory with ETags. Code splitting keeps the codecs (WebAssembly inlined in numcodecs) out of
 * the entry, so a page loads only the codec its store uses; `viewerPreloads` names the files a page should
 * fetch early for a store's codecs.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256Hex } from '../core/secrets.js';
import { route, type Route } from '../http/route.js';
import { NdsError } from '../core/errors.js';

export const viewerScriptPath = '/assets/viewer.js';

interface Asset {
  code: string;
  etag: string;
}

interface Bundle {
  /** Output files by URL path (`/assets/viewer.js`, `/assets/viewer-<hash>.js`). */
  assets: Map<string, Asset>;
  /** numcodecs codec name (`zstd`, `blosc`, `lz4`) → the chunk holding it and the chunks it imports. */
  codecChunks: Map<string, string[]>;
}

/**
 * The codec a bundled module is: fzstd is the viewer's zstd (`zstd-codec.ts`); numcodecs' own zstd is still
 * in zarrita's registry's code but never loaded, so it is no codec to preload.
 */
function codecOf(input: string): string | undefined {
  if (/node_modules\/fzstd\//.test(input)) return 'zstd';
  const name = /node_modules\/numcodecs\/dist\/(\w+)\.js$/.exec(input)?.[1];
  return name === 'zstd' ? undefined : name;
}

let bundle: Promise<Bundle> | undefined;

/** Builds the bundle once per process; a failed build is retried on the next request. */
export function viewerBundle(): Promise<Bundle> {
  bundle ??= buildBundle().catch((err: unknown) => {
    bundle = undefined;
    throw err;
  });
  return bundle;
}

/**
 * The viewer's source: beside this file, or (when this code runs from the CLI's bundle in
 * node_modules/.cache, see bin/nds.js) under `src/web/viewer` of the nearest folder above that has one.
 */
function viewerEntry(): string {
  const beside = fileURLToPath(new URL('./viewer/main.ts', import.meta.url));
  if (existsSync(beside)) return beside;
  for (let dir = path.dirname(beside); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'src', 'web', 'viewer', 'main.ts');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`the viewer's sources are not found near ${beside}`);
}

async function buildBundle(): Promise<Bundle> {
  const { build } = await import('esbuild');
  const entry = viewerEntry();
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
    metafile: true,
  });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    const code = file.text;
    assets.set(`/assets${file.path.slice(outdir.length)}`, { code, etag: `"${sha256Hex(code).slice(0, 32)}"` });
  }
  // Metafile output paths are relative to the working directory; their file names are what URLs use.
  const url = (output: string) => `/assets/${output.slice(output.lastIndexOf('/') + 1)}`;
  const codecChunks = new Map<string, string[]>();
  for (const [output, meta] of Object.entries(result.metafile.outputs)) {
    const codec = Object.keys(meta.inputs).map(codecOf).find((name) => name !== undefined);
    if (codec) codecChunks.set(codec, [url(output), ...meta.imports.filter((i) => i.kind === 'import-statement').map((i) => url(i.path))]);
  }
  return { assets, codecChunks };
}

/**
 * Script URLs a page showing a store with these codecs should preload: the entry and each codec's
 * chunks, so they download while the page parses instead of after the first data arrives. Only the
 * entry when the bundle cannot be built (the script request will then report it).
 */
export async function viewerPreloads(codecs: string[]): Promise<string[]> {
  const out = [viewerScriptPath];
  const built = await viewerBundle().catch(() => undefined);
  for (const codec of codecs) for (const chunk of built?.codecChunks.get(codec) ?? []) if (!out.includes(chunk)) out.push(chunk);
  return out;
}

export const viewerBundleRoutes: Route[] = [
  route({
    method: 'get',
    path: '/assets/:file{viewer(?:-[A-Za-z0-9]+)?\\.js}',
    summary: "The viewer's script and its code-split chunks",
    access: 'none',
    undocumented: true,
    handler: async (c) => {
      const asset = (await viewerBundle()).assets.get(c.req.path);
      if (!asset) throw new NdsError('not_found', { message: `No asset ${c.req.path}.` });
      const { code, etag } = asset;
      // Chunk names carry their content hash, so only the entry needs revalidating.
      const cacheControl = c.req.path === viewerScriptPath ? 'no-cache' : 'public, max-age=31536000, immutable';
      if (c.req.header('if-none-match') === etag) return c.body(null, 304, { etag, 'cache-control': cacheControl });
      return c.body(code, 200, { 'content-type': 'text/javascript; charset=utf-8', etag, 'cache-control': cacheControl });
    },
  }),
];
