#!/usr/bin/env node
// Runs the CLI from an esbuild bundle of the TypeScript sources, kept in node_modules/.cache/nds and rebuilt
// (in about 0.1 s) whenever a source file changes: loading the sources through tsx instead costs about 0.2 s
// on every run. Where the bundle cannot be built or written, or with NDS_CLI_BUNDLE=off, tsx runs the sources.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launchServe } from './serve-launcher.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sources = path.join(root, 'src');

/** Names every source file with its size and modification time: any edit gives another bundle. */
function fingerprint() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const s = statSync(full);
        hash.update(`${path.relative(sources, full)}\0${s.size}\0${s.mtimeMs}\n`);
      }
    }
  };
  walk(sources);
  return hash.digest('hex').slice(0, 16);
}

async function bundledEntry() {
  if (process.env.NDS_CLI_BUNDLE === 'off') return undefined;
  try {
    const cache = path.join(root, 'node_modules', '.cache', 'nds');
    const name = `cli-${fingerprint()}`;
    const entry = path.join(cache, name, 'main.mjs');
    if (existsSync(entry)) return entry;
    const { build } = await import('esbuild');
    const scratch = path.join(cache, `${name}.${process.pid}.tmp`);
    mkdirSync(cache, { recursive: true });
    // Split at dynamic imports, so that what a command does not need (the S3 client, a reader) stays unloaded.
    await build({
      entryPoints: [path.join(sources, 'cli', 'main.ts')],
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir: scratch,
      outExtension: { '.js': '.mjs' },
      sourcemap: 'linked',
      logLevel: 'silent',
    });
    try {
      renameSync(scratch, path.join(cache, name));
    } catch {
      rmSync(scratch, { recursive: true, force: true }); // another run got there first
    }
    // Bundles of older sources go after a day (a run that started on one may still be loading it).
    for (const old of readdirSync(cache)) {
      const full = path.join(cache, old);
      if (old !== name && old.startsWith('cli-') && Date.now() - statSync(full).mtimeMs > 86_400_000) rmSync(full, { recursive: true, force: true });
    }
    return existsSync(entry) ? entry : undefined;
  } catch {
    return undefined;
  }
}

// `nds serve` is started again in a child process with process-start settings (serve-launcher.js); this
// process then only waits for it.
if (!launchServe()) {
  const entry = await bundledEntry();
  if (entry) {
    // Stack traces then name the TypeScript sources, not the bundle's chunks.
    process.setSourceMapsEnabled(true);
    await import(pathToFileURL(entry).href);
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    await import('../src/cli/main.ts');
  }
}
